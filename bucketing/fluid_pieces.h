// Pieces of "fluid" cut to measure for the steps of lumps (plan_fluid_runs).
//
// plan_fluid_runs treats the samples that partner the lumps as fluid: each step's other
// ranks get pieces of one cost. The longest of those samples are not fluid at all: on
// Debian changelog entries at 8,192 tokens under the quadratic model, the partners'
// longest cost 0.4-0.5 of the budget each, so a piece meant to cost 0.8 of it, in a
// step whose dearest lump costs 0.8, takes one of them and stops at 0.45 (two would cost
// 0.9), and the step ends at max/mean 1.16 where the plan promised 1.04. Cut in the
// order of the samples, the dearest steps also take the longest samples when they need
// the smallest pieces.
//
// cut_fluid_pieces instead cuts each piece from samples of one length down: a batch of
// n samples whose longest has length L costs n f(L), so it takes the longest length for
// which some count reaches the piece's target (within PieceCut::near_enough of it)
// without passing its ceiling (the step's dearest lump: a piece dearer than that would
// lengthen the step), with as few samples of that length and the next shorter as reach
// it, or (PieceCut::to_target) as many as come nearest the target itself under the
// ceiling. When no length does, the dearest piece under the ceiling. The pieces with the
// least room between target and ceiling are cut first; those with room then take the
// longest samples left, so the coarse ones are not all left for whatever is cut after.
//
// Stopping at near_enough leaves the pieces of fine samples that much short of their
// target: on HTML pages at 64 ranks (quadratic, 16,384 tokens) a step of lumps at
// 0.62-0.75 of the budget got pieces at 0.62-0.75 where the plan wanted 0.746, and
// ended at max/mean 1.10 where the plan promised 1.03. Going on to the target (with
// near_enough 0.9), the epoch's worst step was 1.07.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

// How cut_fluid_pieces cuts.
struct PieceCut {
  // The share of a piece's target that counts as reaching it, when choosing the length
  // to cut from.
  double near_enough = 0.85;
  // Once a length is chosen, take as many samples as come nearest the target itself
  // without passing the ceiling (true), or only as few as reach near_enough of it.
  bool to_target = true;
};

struct PieceRequest {
  double target = 0;   // the cost the plan wants the piece to have
  double ceiling = 0;  // the most it may cost (at least target)
};

// `lengths`: the fluid's samples. `most_per_batch(L)`: how many samples padded to L make
// an allowed batch (the budget, a sample cap, a token bound). Returns for each request
// the positions in `lengths` of the samples it takes, the piece's longest first; no
// position twice. A piece is empty only when no sample is left; when every sample left
// costs more than the ceiling, it takes the cheapest one.
std::vector<std::vector<size_t>> cut_fluid_pieces(
    std::span<const uint64_t> lengths, std::span<const PieceRequest> requests, const PieceCut& how,
    const CostModel& cost, const std::function<uint64_t(uint64_t)>& most_per_batch);

}  // namespace evenfeed
