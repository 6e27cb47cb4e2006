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
// which some count reaches the piece's target (within `near_enough` of it) without
// passing its ceiling (the step's dearest lump: a piece dearer than that would lengthen
// the step), with as few samples of that length and the next shorter as reach it. When
// no length does, the dearest piece under the ceiling. The pieces with the least room
// between target and ceiling are cut first; those with room then take the longest
// samples left, so the coarse ones are not all left for whatever is cut after.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct PieceRequest {
  double target = 0;   // the cost the plan wants the piece to have
  double ceiling = 0;  // the most it may cost (at least target)
};

// `lengths`: the fluid's samples. `near_enough`: the share of a target that reaches it
// (0.85 in the planner). `most_per_batch(L)`: how many samples padded to L make an
// allowed batch (the budget, a sample cap, a token bound). Returns for each request
// the positions in `lengths` of the samples it takes, the piece's longest first; no
// position twice. A piece is empty only when no sample is left; when every sample left
// costs more than the ceiling, it takes the cheapest one.
std::vector<std::vector<size_t>> cut_fluid_pieces(
    std::span<const uint64_t> lengths, std::span<const PieceRequest> requests, double near_enough,
    const CostModel& cost, const std::function<uint64_t(uint64_t)>& most_per_batch);

}  // namespace evenfeed
