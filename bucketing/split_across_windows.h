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
#include <vector>

#include "sampler/plan.h"

namespace evenfeed {

// A step as a window's plan hands it over: one batch per rank, and each batch's cost
// under the plan's cost model (0 for an empty batch), so that the split reads no
// sample's length again (`--synthetic` lengths are computed on every read).
struct CostedStep {
  StepBatches ranks;
  std::vector<double> costs;
};

struct CrossWindowSplitOptions {
  // Nothing is done when every step of both windows is at or below this max/mean (the
  // window planner's own swaps stop there too).
  double level_enough = 1.02;
  // After any split the batch swaps (swap_to_level) are tried once more, at most this
  // many per rank in all (as in WindowPlanner: 4 x world size).
  size_t swaps_per_rank = 4;
};

// Splits pairs of steps of `held` and `fresh` (every step of both the same width) in
// cost order (split_in_cost_order), then tries the swaps once more where any split
// was made. Every batch stays whole and in exactly one step, with its cost; each step
// keeps its width and its place. Returns the splits made.
size_t split_across_windows(std::vector<CostedStep>& held, std::vector<CostedStep>& fresh,
                            const CrossWindowSplitOptions& options = {});

}  // namespace evenfeed
