// Absorbing a window's negligible steps into its other steps.
//
// A step whose dearest batch costs next to nothing (a few samples of a dozen tokens
// on each rank, left over when a window's shortest samples are cut W ways under a
// sample cap) still costs a whole step: every rank waits for the gradients' all-reduce
// and runs the optimizer for it, and its max/mean counts as much as any other step's
// in the per-step imbalance. Under the quadratic model at 16,384 tokens, Python and
// C++ sources at 64 ranks ended each epoch with one such step: 3-4 files of 12-20
// words a batch, 1.06-1.08 max/mean, while a step of 22-57 files of 25-66 words a
// batch ran beside it at 1.017 with room under the cap for all of them.
//
// absorb_negligible_steps deals each such step's samples, longest first, into the
// batches of another step of the window: each sample to the batch that costs least
// with it, among those whose longest sample is at least as long (nothing there is
// padded more) or that are empty, and that the sample cap or token bound allows one
// more. Of the `most_hosts` steps whose dearest batch is least (at or above the
// negligible step's), the one left most level is kept, if every sample found a batch;
// its max/mean ends at or below the largest of its own, the negligible step's and
// `level_enough` (the worse of the two steps is no less level as one); its dearest
// batch grows by at most `negligible_share` of the budget, so the host runs longer by
// no more than a negligible step's worth while a whole step, and its all-reduce, is
// gone; and the slots its samples are padded with in the host stay within
// `padding_room`. Otherwise the step stays.
//
// Under the cost model alone, with no cost per step, the host's growth can outweigh
// the step removed: on the sources above the useful share of rank-time fell from
// 95.35% to 95.31% (the 3-4 tiny files a rank are padded to 25-66 words in the host),
// for one step fewer in 14 and a mean max/mean of 1.032 -> 1.029. A real step costs
// more than 0.04% of a full one in all-reduce and optimizer time alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct AbsorbOptions {
  // The cost of a full rank (the budget's cost); a step whose dearest batch costs at
  // most `negligible_share` of it is negligible.
  double budget = 0;
  double negligible_share = 0.01;
  // A host may end at this max/mean even when it was more level before.
  double level_enough = 1.02;
  // Host steps tried for each negligible step, least dear first.
  size_t most_hosts = 8;
  // Padded token slots the absorbed samples may add in all.
  double padding_room = 0;
};

// `steps[s][r]`: positions in `lengths` of the samples of rank r's batch in step s;
// every step has the same number of ranks. `fits(count, longest)`: whether `count`
// samples padded to `longest` make an allowed batch. Absorbed steps are removed from
// `steps`; returns how many were.
size_t absorb_negligible_steps(std::span<const uint64_t> lengths,
                               std::vector<std::vector<std::vector<size_t>>>& steps,
                               const CostModel& cost,
                               const std::function<bool(uint64_t, uint64_t)>& fits,
                               const AbsorbOptions& options);

}  // namespace evenfeed
