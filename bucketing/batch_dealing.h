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
#pragma once

#include <cstdint>
#include <vector>

#include "core/philox.h"

namespace evenfeed {

// For each of `pool` (sample lengths), the batch it is dealt to: batch b takes
// `places[b]` of them, each no longer than `longest[b]`. The places must be able to
// hold the pool (they can when it came from these batches). Samples are dealt longest
// first (those that fit the same batches in any order), each to a place drawn
// uniformly among the free places that can hold it, so none is stranded: every place
// a longer sample fits, a shorter one fits too.
// O(pool x log(batches)); deterministic for a given `rng`.
std::vector<uint32_t> deal_to_places(const std::vector<uint64_t>& pool,
                                     const std::vector<uint64_t>& longest,
                                     const std::vector<uint64_t>& places, CounterRng& rng);

}  // namespace evenfeed
