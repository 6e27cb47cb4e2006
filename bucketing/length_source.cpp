#include "bucketing/length_source.h"

#include <algorithm>
#include <cmath>

#include "core/philox.h"

namespace evenfeed {

SyntheticLengths::SyntheticLengths(uint64_t n, uint64_t seed, double median, double sigma,
                                   double tail_share, uint64_t max_length)
    : n_(n),
      seed_(seed),
      median_(median),
      sigma_(sigma),
      tail_share_(tail_share),
      max_length_(max_length) {}

uint64_t SyntheticLengths::length(uint64_t id) const {
  CounterRng rng(seed_, RngStream::kSynth, 2, id);
  double l = median_ * std::exp(sigma_ * rng.normal());
  if (rng.uniform() < tail_share_) l = median_ * rng.uniform(20, 100);
  return std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, max_length_);
}

}  // namespace evenfeed
