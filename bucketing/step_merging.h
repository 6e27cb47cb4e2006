// Merging a window's cheapest steps two at a time.
//
// A sample cap keeps batches of short samples far below the budget, so a window's
// shortest samples end in steps of their own, cut shortest first, each at a level its
// first batch sets (plan_capped). The shortest of them are few to a step: Python and C
// sources at 32,768 tokens, 64 ranks, quadratic cost, capped at 32, had three steps an
// epoch of samples of 1-57 words (115, 365 and 1,005 samples), their dearest batches
// 0.00003-0.0012 of the budget, at max/mean 1.081, 1.106 and 1.033: one or two coarse
// samples a batch (a 19-word sample costs as much as nineteen 1-word ones) leave little
// to level with. Each such step still costs the run a whole step's fixed work (the
// gradients' all-reduce, the optimiser's update) for almost no compute.
//
// Together, those 1,485 samples make one step at 1.019: its W longest samples head a
// batch each and the others are dealt, longest first, to the batch whose cost each
// raises least (deal_under_heads). Every sample is then padded to its batch's head,
// which for samples this short is a few thousand token slots in an epoch of 16 million
// (0.24 points of padding share in that example), and which the padding room bounds.
//
// merge_cheap_steps does that for the steps of least total cost, two at a time, while
// the merged step is no less level than the less level of the two, its dearest batch
// costs no more than their two dearest together (the run gets no slower), every batch
// keeps the cap, token bound and budget, and the padded slots it adds fit the room.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct MergeOptions {
  // No batch may cost more than this (the per-rank budget's cost).
  double budget = 0;
  // Padded token slots the merges may add in all (a merged step's slots less those of
  // the two steps it replaces).
  double padding_room = 0;
  // What a step costs besides its batches (the gradients' all-reduce, the optimiser's
  // update), in the units of `budget`: a merged step may cost this much more than the
  // dearest batches of the two it replaces together.
  double step_fixed_cost = 0;
};

// `samples` (positions in `lengths`) dealt into `ranks` batches: the `ranks` longest
// head one batch each, the others, longest first, each to the batch whose cost it
// raises least among those that `fits` one more and stay within `budget`. None when
// there are fewer samples than ranks or a sample finds no batch.
std::optional<std::vector<std::vector<size_t>>> deal_under_heads(
    std::span<const uint64_t> lengths, std::vector<size_t> samples, size_t ranks,
    const CostModel& cost, const std::function<bool(uint64_t, uint64_t)>& fits, double budget);

// `steps[s][r]`: positions in `lengths` of the samples of rank r's batch in step s;
// every step has the same number of ranks. `fits(count, longest)`: whether `count`
// samples padded to `longest` make an allowed batch. Merges steps as above (a merged
// step replaces the first of its two; the second is removed); returns the padded slots
// spent.
double merge_cheap_steps(std::span<const uint64_t> lengths,
                         std::vector<std::vector<std::vector<size_t>>>& steps,
                         const CostModel& cost,
                         const std::function<bool(uint64_t, uint64_t)>& fits,
                         const MergeOptions& options);

}  // namespace evenfeed
