// A lower bound on the worst step's max/mean from the lumps one step at a time: the
// second argument of the report's bound (imbalance_bound.h), which takes the larger.
//
// Why a second one. The first argument sums over all the steps holding the t dearest
// lumps, so a step of lumps at the budget with room to spare lends it, on paper, to a
// step of sparser lumps below: under a token bound, where a batch of shorter samples
// cannot come near the dearest lumps' cost, that step is left far from level in every
// plan, and the first argument does not see it. `doc_paragraphs` at 16,384 tokens and
// a bound of 16,384, 64 ranks: 108 lumps at the budget, 20 at 0.70-0.99 of it and 64
// more at 0.48-0.69, partners (batches without a lump) at 0.55 of the budget at most.
// The first argument gives 1.068; no plan has its worst step under 1.169.
//
// The argument. Costs are in budgets; R is a plan's worst max/mean; P is the most a batch
// without a lump can cost (the largest reach, imbalance_bound.h). A step whose dearest
// batch costs h holds at least W h / R. Its batches are its lumps, each alone, and
// partners, each at most P, so it holds at most W P + E, E the sum of x - P over its
// lumps dearer than P (their excess). So every step needs E >= W (h / R - P).
//  1. One step: its lumps are at most W, none dearer than h, so E is at most S(h), the
//     W largest excesses of lumps no dearer than h, and R >= f(h) = W h / (W P + S(h)).
//     In particular for the step of the dearest lump.
//  2. Steps above a level. Take a lump cost theta above R P, and the k steps whose
//     dearest batch costs theta or more (each holds a lump of theta or more, being
//     dearer than P: so k <= n_theta, the lumps of theta or more, and k >= n_theta / W).
//     Together they need W (h_1 + ... + h_k) / R - k W P of excess, h_j at least the
//     ((j-1) W + 1)-th dearest lump for j <= ceil(n_theta / W) and theta after, and hold
//     at most the k W largest excesses. Their k W slots hold every lump of theta or more;
//     the other lumps dearer than R P that they cannot hold are in steps whose dearest
//     batch costs less than theta, each of which needs f(its dearest) <= R by 1. So the
//     largest lump left out must be at most h*, the dearest lump cost below theta with
//     f <= R: the k steps hold every lump dearer than max(h*, R P), k W >= their count.
//     Some k must meet both; for each theta.
// Both only grow easier as R grows, so the least R that passes is found by bisection,
// and the bound is the largest R that fails. The excess needed over k is convex (the
// excesses come dearest first), so each theta takes a binary search, not a scan.
//
// Like the first argument it is a bound, not an estimate: the partners are all allowed
// P, and each step all the excess below its dearest batch.
#pragma once

#include <cstdint>
#include <span>

namespace evenfeed {

struct LumpGroup {
  double cost = 0;     // in budgets
  uint64_t count = 0;  // lumps of this cost
};

// `lumps`: every lump of one epoch, as groups of one cost, dearest first. `partner`: the
// most a batch without a lump can cost. 1 when no lump or one rank.
double lump_step_bound(std::span<const LumpGroup> lumps, double partner, uint64_t world_size);

}  // namespace evenfeed
