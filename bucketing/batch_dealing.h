// Deals a window's samples to its batches at random, keeping what every batch costs.
//
// The noisy sort makes each batch a run of samples of like length. On a small corpus a
// run covers most samples of its lengths, so next epoch the same neighbours meet again:
// a fifth to a third of the pairs batched together were batched together the epoch
// before (Python and C sources, Debian changelog entries, under a quadratic budget).
// But a sample no longer than a batch's longest may take a place in that batch without
// changing the batch's count or its longest, and so without changing its cost (count x
// longest under either cost model), its size in padded tokens, or the padding of the
// window (slots minus tokens, summed over its batches). Each batch keeps its longest
// sample and its count; every other sample is dealt to a random place among those in
// batches whose longest is at least its length. Step costs, balance and padding stay
// exactly as planned; who shares a batch becomes a random draw.
//
// Random places still let a sample meet some of last epoch's mates again: a long
// sample fits only the few batches whose longest is longer, and so do its mates. When
// the deal knows each sample's batch in the previous epoch ("group"), it draws a few
// places for each sample and takes the one whose batch holds the fewest of its group
// (the first with none): each sample placed there adds that many repeated pairs, and
// no other choice changes what any batch costs. Samples the deal still left beside
// mates are then swapped with others where that parts more pairs than it joins.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/philox.h"

namespace evenfeed {

// Steers a deal away from last epoch's batch mates (see above).
struct DealSteer {
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  // Per sample of the pool: its batch in the previous epoch (kNoGroup: unknown).
  std::span<const uint32_t> pool_group;
  // Per batch: the group of the sample it keeps (its longest), which the pool's
  // samples of that group would meet again there.
  std::span<const uint32_t> batch_group;
  // Places drawn per sample; the first whose batch holds none of its group is taken,
  // else the one holding fewest. 16 gets most of what trying every batch would (on
  // Python and C sources, quadratic, 8 ranks at 16,384 tokens: re-batched pairs 10.3%
  // with one draw, 6.8% with 4, 6.5% with 16 or 64).
  uint32_t draws = 16;
  // Then swap dealt samples between batches where that parts more former mates than
  // it joins (each swapped sample fitting the other's batch, so costs and padding stay).
  // The greedy deal places the most constrained samples first; the last ones take what
  // room is left, often beside mates (Python and C sources, quadratic, 64 ranks, 4,096
  // tokens: re-batched pairs 3.0% with the deal alone, 2.3% with the swaps).
  bool swap_apart = true;
};

// For each of `pool` (sample lengths), the batch it is dealt to: batch b takes
// `places[b]` of them, each no longer than `longest[b]`. The places must be able to
// hold the pool (they can when it came from these batches). Samples are dealt longest
// first (those that fit the same batches in any order), each to a place drawn
// uniformly among the free places that can hold it, so none is stranded: every place
// a longer sample fits, a shorter one fits too.
// With `steer`, each sample takes the best of steer->draws places (see DealSteer).
// O(pool x draws x log(batches)); deterministic for a given `rng`.
std::vector<uint32_t> deal_to_places(const std::vector<uint64_t>& pool,
                                     const std::vector<uint64_t>& longest,
                                     const std::vector<uint64_t>& places, CounterRng& rng,
                                     const DealSteer* steer = nullptr);

}  // namespace evenfeed
