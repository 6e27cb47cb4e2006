// Levelling a window's worst steps by moving single samples between steps.
//
// level_by_swaps exchanges whole batches, so it cannot help a step whose dearest
// batches are fine-grained and merely cut too dear. On Debian changelog entries at
// 8,192 tokens under the quadratic model, 64 ranks, a final step held 28 batches of
// 11-59 entries at 0.46-0.48 of the budget beside 26 coarse batches at 0.41-0.45 and
// ten entries of 4,300 words alone at 0.33 (max/mean 1.105): cut to 0.453, those 28
// would leave it at 1.06. The samples trimmed off must run somewhere else in the
// window, and there is room: in a step of documents at the budget, a partner batch of
// two 2,800-word entries at 0.32 idles beside them, and takes four 300-word entries
// without making its step any less level (its mean rises; its dearest does not).
//
// level_by_moves does that, worst step first: it lowers the step's max/mean by
// `target_step` at a time, each time taking the shortest sample of its dearest batch
// until the step is at the target, and gives each sample taken (longest first) to the
// batch of another step that pads it least, among those whose longest sample is at
// least as long (nothing already there is padded more), whose sample cap or token
// bound allows one more, and whose cost stays at or below its step's dearest batch (so
// no step gets longer or less level). When a sample finds no such batch, or the padded slots spent
// would pass `padding_room`, that trim is undone and the step left as it is. A moved sample is
// padded to its new batch's longest, which is what the room bounds: the idle
// rank-time it fills was spent anyway, but the padding share is a target of its own.
//
// A step that cannot be trimmed (its dearest batch is a sample alone, or at the cap)
// may instead be filled: its cheapest batch that can hold one more sample of its own
// longest length without passing the step's dearest takes the longest sample of a
// batch of another step whose longest is no longer, choosing the donor whose longest
// is longest (padded least), among those whose step stays within max(level_enough,
// its max/mean now): a level step gives only what keeps it level. On a corpus of 1.2
// million paragraphs at 64 ranks (16,384 tokens, quadratic), a step of documents and
// batches of three 8,000-word paragraphs at 0.85 of the budget beside batches of
// 1,500-2,600-word ones at 0.67 went from max/mean 1.119 to 1.092 so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct MoveOptions {
  // A step whose dearest batch costs at most this times the mean is left alone.
  double level_enough = 1.04;
  // Each trim or fill lowers the step's max/mean by this much (to level_enough at the
  // least).
  double target_step = 0.005;
  // Padded token slots the moves may add in all (a moved sample's slots in its new
  // batch less those it had).
  double padding_room = 0;
};

// `steps[s][r]`: positions in `lengths` of the samples of rank r's batch in step s;
// every step has the same number of ranks. `fits(count, longest)`: whether `count`
// samples padded to `longest` make an allowed batch. Moves samples between batches of
// different steps; returns the padded slots spent.
double level_by_moves(std::span<const uint64_t> lengths,
                      std::vector<std::vector<std::vector<size_t>>>& steps, const CostModel& cost,
                      const std::function<bool(uint64_t, uint64_t)>& fits,
                      const MoveOptions& options);

}  // namespace evenfeed
