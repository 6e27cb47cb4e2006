// A lower bound on the worst step's max/mean from the lumps one step at a time: the
// second argument of the report's bound (imbalance_bound.h), which takes the larger.
//
// Why a second one. The first argument sums over all the steps holding the t dearest
// lumps, so a step of lumps at the budget with room to spare lends it, on paper, to a
// step of sparser lumps below: under a token bound, where a batch of shorter samples
// cannot come near the dearest lumps' cost, that step is left far from level in every
// plan, and the first argument does not see it. `doc_paragraphs` at 16,384 tokens and
// a bound of 16,384, 64 ranks: 108 lumps at the budget, 20 at 0.70-0.99 of it and 56
// more at 0.48-0.69, partners (batches without a lump) at 0.55 of the budget at most.
// The first argument gives 1.068; no plan has its worst step under 1.186.
//
// The argument. Costs are in budgets; R is a plan's worst max/mean. A batch without a
// lump costs at most its own head's reach (what a batch headed by its longest sample can
// cost, imbalance_bound.h), and no two batches share a head, so m such batches cost at
// most the m largest reaches; P is the largest. A step whose dearest batch costs h holds
// at least W h / R.
//  1. One step: its batches are at most W lumps, none dearer than h, and partners, so
//     it holds at most M(h), the W dearest of the lumps no dearer than h and the
//     reaches together, and R >= f(h) = W h / M(h). In particular for the step of the
//     dearest lump.
//  2. Steps above a level. Take a lump cost theta above P, and the k steps whose dearest
//     batch costs theta or more (each holds a lump of theta or more, being dearer than
//     P: so k <= n_theta, the lumps of theta or more, and k >= n_theta / W). Together
//     they need W (h_1 + ... + h_k) / R, h_j at least the ((j-1) W + 1)-th dearest lump
//     for j <= ceil(n_theta / W) and theta after, and hold at most the k W dearest of
//     the lumps and the reaches. Their k W slots hold every lump of theta or more; a lump
//     dearer than P that they do not hold is in a step whose dearest batch is a lump
//     cheaper than theta, which needs f <= R by 1: so every lump dearer than max(h*, P)
//     is among them, h* the dearest lump cost below theta with f <= R, and k W is at
//     least their count. Some k must meet both; for each theta.
// Both only grow easier as R grows, so the least R that passes is found by bisection,
// and the bound is the largest R that fails. What k steps can hold is concave in k (the
// batches come dearest first) and what they need is linear, so each theta takes a
// binary search, not a scan.
//
// Like the first argument it is a bound, not an estimate: each step is allowed all the
// lumps below its dearest batch and the dearest reaches, whatever the other steps hold.
#pragma once

#include <cstdint>

#include "bucketing/cost_groups.h"

namespace evenfeed {

// `lumps`: every lump of one epoch; `reaches`: every other sample's reach (both dearest
// first). 1 when there is no lump or one rank.
double lump_step_bound(const CostGroups& lumps, const CostGroups& reaches, uint64_t world_size);

}  // namespace evenfeed
