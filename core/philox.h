// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). Every random
// choice in evenfeed (order, crop, flip, noise in sort keys) is a pure function of
// (seed, stream, epoch, item), so a resumed run, another thread count or another
// world size sees exactly the same draws.
#pragma once

#include <array>
#include <cstdint>

namespace evenfeed {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// One Philox4x32-10 block: 128 random bits for a (counter, key).
PhiloxCounter philox4x32(PhiloxCounter counter, PhiloxKey key);

// Streams keep unrelated uses of one seed apart.
enum class RngStream : uint8_t {
  kOrder = 1,       // global sample order
  kSortNoise = 2,   // noisy sort keys in length bucketing
  kStepOrder = 3,   // step order inside an epoch
  kAugment = 4,     // crops and flips
  kSubstitute = 5,  // substitutes for bad records
  kSynth = 6,       // synthetic data
  kModelInit = 7,   // trainer weights
  kBatchDeal = 8,   // which batch of its window a sample is dealt to (length bucketing)
};

// A generator for one (seed, stream, epoch, item): draws are taken from consecutive
// Philox blocks. Cheap to construct, so make one per sample where needed.
class CounterRng {
 public:
  CounterRng(uint64_t seed, RngStream stream, uint32_t epoch, uint64_t item);

  uint32_t next_u32();
  uint64_t next_u64();
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), unbiased (Lemire's method); n > 0.
  uint64_t below(uint64_t n);
  // Standard normal (Box-Muller).
  double normal();

 private:
  void refill();

  PhiloxKey key_;
  PhiloxCounter counter_;
  PhiloxCounter block_{};
  int used_ = 4;
};

// A strong 64-bit mixer (the splitmix64 finaliser), for hashing ids.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace evenfeed
