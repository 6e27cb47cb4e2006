// Two adjacent windows' steps split in cost order together, before either is served.
//
// WindowPlanner splits a window's steps in cost order among themselves, after the shed
// (split_in_cost_order.h), and hands them out before it plans the next window, so
// that plan memory stays O(window). Where an epoch is several windows, a step of one
// window whose costs overlap a step of the next could be split with it just as well:
// the window ends that the final cut or the carried lumps leave uneven find partners
// there. TokenBudgetPlanner therefore holds one window's steps back until the next
// window is planned (two windows of steps at most, still O(window)), and splits the
// two windows' steps here before it serves the held ones. Over whole epochs of a
// dumped plan (bench/plan_step_cuts.py --epoch-splits), man-page paragraphs at 64
// ranks, 8,192 tokens, the token bound at the budget, went from imbalance p99 1.114
// to 1.082 and 0.85% quicker.
//
// Only whole batches move, as in the window's own split: padding and batch mates do
// not change, and each step keeps its place in the step order chosen for lag-1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "bucketing/cost_model.h"
#include "sampler/plan.h"

namespace evenfeed {

struct CrossWindowSplitOptions {
  // Nothing is done when every step of both windows is at or below this max/mean (the
  // window planner's own swaps stop there too).
  double level_enough = 1.02;
  // After any split the batch swaps (swap_to_level) are tried once more, at most this
  // many per rank in all (as in WindowPlanner: 4 x world size).
  size_t swaps_per_rank = 4;
};

// Splits pairs of steps of `held` and `fresh` (each step one batch per rank, every
// step of both the same width) in cost order (split_in_cost_order), the batch costs
// taken from `cost` and each sample's length (`length_of`, already cut to the budget),
// then tries the swaps once more where any split was made. Every sample stays in
// exactly one batch and every batch whole; each step keeps its width and its place.
// Returns the splits made.
size_t split_across_windows(std::vector<StepBatches>& held, std::vector<StepBatches>& fresh,
                            const CostModel& cost,
                            const std::function<uint64_t(uint64_t)>& length_of,
                            const CrossWindowSplitOptions& options = {});

}  // namespace evenfeed
