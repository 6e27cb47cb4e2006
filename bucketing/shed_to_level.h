// Shortening a window's steps by handing their dearest batches to steps that are
// longer anyway.
//
// swap_to_level (lump_runs.h) levels the worst step by lifting its light batches: it
// brings in a dearer batch from another step for a cheaper one, the swap that most
// lowers the worse of the two steps. It does not look for the other way round, the
// step's dearest batch run in a step whose own dearest is dearer still, for a cheaper
// batch of that step: the step gets shorter, and the other as long as it was, with
// more work, so more level too. C/C++ and Python sources at 64 ranks, 16,384 tokens,
// the token bound at the budget: a step of files of 10,383-11,698 words, each alone
// in its batch, sat at max/mean 1.185, its dearest (0.532 of the budget) alone above
// the next (0.521), while two steps of files at the budget (1.279) held batches at
// 0.43-0.54. Shed in a few rounds, it runs at 1.119 and 7% shorter (its dearest 0.493),
// those two at 1.271. Where the dearest cost is shared by several batches, any one
// given away leaves the step as long as before and lighter: they go together.
//
// shed_to_level hands the k dearest batches of a step (k = 1 to max_block, all at once)
// each to a step whose dearest batch is at least as dear, taking back the dearest batch
// there that is cheaper than the k-th shed one (or no dearer than the (k+1)-th, when
// that leaves it more level). Whole batches move, as in swap_to_level: padding and
// batch mates do not change, only the step a batch runs in. Steps cut from stretches
// of the cost order have nothing to shed: no dearer step holds a cheaper batch.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace evenfeed {

struct ShedOptions {
  // A step at or below this max/mean is left as it is.
  double level_enough = 1.0;
  // The most batches handed away at once from a step.
  size_t max_block = 8;
  // The most exchanges (each of up to max_block batches) in one call.
  size_t max_rounds = 64;
};

// `steps`: indices into `costs`, every step the same width. While a step above
// level_enough can shed its k dearest batches as above so that its max/mean falls, the
// least level such step sheds the k that leaves it most level (the smallest k of
// equals). Every shed shortens a step and lengthens none, so no step's max/mean and no
// step's dearest batch ever rises. Returns the exchanges made.
size_t shed_to_level(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                     const ShedOptions& options = {});

}  // namespace evenfeed
