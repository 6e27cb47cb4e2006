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
// A step that cannot be trimmed (its dearest batch is a sample alone, or at the cap) is
// left as it is. Until plan revision 21 such a step was instead "filled": its light
// batches took samples from batches of other steps that were not those steps' dearest.
// That lowered its max/mean, but a donor batch was seldom its step's dearest, so steps
// hardly got shorter (a step lasts as long as its dearest batch): on the 120
// configurations of docs/plan_history.md the useful share (the samples' own cost over W times
// the sum of each step's dearest) came out the same to six digits with and without it
// in 117, and at most 0.0007 points higher with it in three, while the moved samples'
// padding cost up to a point of padding share (`changelog_entries` linear, 64 ranks,
// 32,768 tokens: 0.75% -> 1.76% for a mean max/mean of 1.0318 -> 1.0290). It spent
// padding on the figure, not on the run, and was removed.
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
  // Each trim lowers the step's max/mean by this much (to level_enough at the least).
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
