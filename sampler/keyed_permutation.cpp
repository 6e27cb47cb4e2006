#include "sampler/keyed_permutation.h"

#include "core/philox.h"

namespace evenfeed {

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t key) : n_(n), key_(key) {
  // Domain 2^(2h) >= n, so cycle walking takes fewer than 4 steps on average.
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
}

uint64_t KeyedPermutation::round_function(uint64_t half, int round) const {
  return mix64(half ^ mix64(key_ + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(round + 1))) &
         half_mask_;
}

uint64_t KeyedPermutation::encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    uint64_t next = left ^ round_function(right, r);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::decrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    uint64_t previous = right ^ round_function(left, r);
    right = left;
    left = previous;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::operator()(uint64_t i) const {
  // Cycle walking: a permutation of the power-of-two domain restricted to [0, n) by
  // re-encrypting until the value lands inside; still a bijection on [0, n).
  uint64_t x = encrypt(i);
  while (x >= n_) x = encrypt(x);
  return x;
}

uint64_t KeyedPermutation::inverse(uint64_t x) const {
  uint64_t i = decrypt(x);
  while (i >= n_) i = decrypt(i);
  return i;
}

}  // namespace evenfeed
