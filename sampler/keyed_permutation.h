// A bijection on [0, n) computed in O(1) memory: a balanced Feistel network over the
// smallest even-bit power of two that holds n, with cycle walking to stay inside
// [0, n). It replaces a stored shuffle for datasets too large to hold one (usable far
// beyond 2^40 samples): position i of the epoch's order is permutation(i).
#pragma once

#include <cstdint>

namespace evenfeed {

class KeyedPermutation {
 public:
  // `key` selects the permutation (derive it from seed, epoch and purpose).
  KeyedPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // The element at position i (i < n).
  uint64_t operator()(uint64_t i) const;
  // Position of element x: the inverse, for tests and resume checks.
  uint64_t inverse(uint64_t x) const;

 private:
  uint64_t encrypt(uint64_t x) const;
  uint64_t decrypt(uint64_t x) const;
  uint64_t round_function(uint64_t half, int round) const;

  static constexpr int kRounds = 6;
  uint64_t n_;
  uint64_t key_;
  int half_bits_;
  uint64_t half_mask_;
};

}  // namespace evenfeed
