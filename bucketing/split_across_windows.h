// Two adjacent windows' steps split in cost order together, before either is served.
//
// WindowPlanner splits a window's steps in cost order among themselves, after the shed
// (split_in_cost_order.h), and hands them out before it plans the next window, so
// that plan memory stays O(window). Where an epoch is several windows, a step of one
// window whose costs overlap a step of the next could be split with it just as well:
// the window ends that the final cut or the carried lumps leave uneven find partners
// there. TokenBudgetPlanner therefore holds one window's steps back until the next
// window is planned (two windows of steps at most, still O(window)), and splits the
// two windows' steps here before it serves the held ones. Man-page paragraphs at 64
// ranks, 8,192 tokens, the token bound at the budget (five windows an epoch): imbalance
// p99 1.114 -> 1.083, mean 1.0219 -> 1.0174, useful share 96.38% -> 96.83%; of the
// sweeps' 314 configurations (docs/plan_history.md) 98 changed, all of an epoch of several
// windows, each quicker.
//
// Only whole batches move, as in the window's own split: padding and batch mates do
// not change, and each step keeps its place in the step order chosen for lag-1. The
// swaps are not tried after it, as they are in the window: there they levelled the
// worst steps a little further (p99 lower in 31 of those 98 configurations) but made
// 62 a little slower, and took 4% of planning 10 million lengths.
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
};

// Splits pairs of steps of `held` and `fresh` (every step of both the same width) in
// cost order (split_in_cost_order). Every batch stays whole and in exactly one step,
// with its cost; each step keeps its width and its place; no split lengthens its two
// steps together or leaves the worse of them less level. Returns the splits made.
size_t split_across_windows(std::vector<CostedStep>& held, std::vector<CostedStep>& fresh,
                            const CrossWindowSplitOptions& options = {});

}  // namespace evenfeed
