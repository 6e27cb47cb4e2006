// Steps for lumps: batches whose cost no batch of other samples can match.
//
// Under a token bound (BucketingOptions::max_batch_tokens) and the quadratic model, a
// sample longer than half the bound is alone in its batch, and when it costs more than
// any batch of two or more samples can, only other such samples can match it. At the
// top of a corpus's lengths they are sparse: 64 consecutive ones can span 0.7 to 0.95
// of the budget, so cutting them W at a time leaves steps at max/mean 1.2 or more.
// A step may instead hold fewer lumps and complete its other ranks with the dearest
// other batches ("partners"); a plateau of lumps (documents truncated to the budget)
// that does not divide by W is then spread over its steps instead of leaving one step
// with a few of them among light batches.
//
// plan_lump_runs chooses, by dynamic programming, how many of the next dearest lumps
// each step takes (a run, in cost order) and completes it with the next dearest
// partners, so that the worst step's max/mean is least (ties: the least sum of
// max/mean - 1). Cutting the lumps W at a time is one of its choices.
//
// plan_coarse_runs does the like for the coarse batches of a window whose fillers
// are too few to complete every group of like cost (window_planner.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace evenfeed {

struct LumpRuns {
  std::vector<size_t> lumps_per_step;  // each step: that many lumps, the rest partners
  double worst = 1;                    // the worst step's max/mean
};

// `lumps` and `partners`: costs, dearest first (a partner may cost more than a lump).
// Nothing when the partners are too few to complete the steps.
std::optional<LumpRuns> plan_lump_runs(std::span<const double> lumps,
                                       std::span<const double> partners, size_t world_size);

// Runs for lumps whose partners are cut to measure from fine-grained samples ("fluid":
// many short samples, so a batch of them can be cut to any cost up to a lump's): each
// step a run of the next dearest lumps, its other ranks pieces of fluid at one level,
// as cheap as keeps the step within the worst max/mean. The least worst max/mean whose
// steps need at most `fluid_mass` of fluid (to 0.1%), and for it the least fluid.
struct FluidRuns {
  std::vector<size_t> lumps_per_step;
  std::vector<double> piece_cost;  // each step: the cost of each of its W - run pieces
  double worst = 1;
  double fluid_used = 0;
};
std::optional<FluidRuns> plan_fluid_runs(std::span<const double> lumps, double fluid_mass,
                                         size_t world_size);

// Runs for coarse batches (costs fixed, dearest first) whose steps are completed with
// fillers cut to the run's dearest batch: a step of the batches [i, i + run) and W - run
// pieces of fillers costing costs[i] each has max/mean W costs[i] / (its sum). The runs
// whose steps' total excess (sum of max/mean - 1) is least while their pieces take at
// most `filler_mass` of fillers (a Lagrangian search: the least excess at the price of
// filler mass found, not always the least possible). A run whose dearest is above
// `reach` (no batch of fillers can cost that much) takes no pieces, so it is W batches
// or the last run. Nothing when even the runs that need the fewest pieces need more.
struct CoarseRuns {
  std::vector<size_t> batches_per_step;
  double filler_used = 0;
  double excess = 0;
};
std::optional<CoarseRuns> plan_coarse_runs(std::span<const double> costs, double filler_mass,
                                           size_t world_size, double reach);

// Runs of the cost order cannot mix a plateau of the dearest lumps into the steps of
// sparser ones below it, which is often what levels those: swap_to_level then swaps
// batches between `steps` (indices into `costs`, W per step), each swap the one that
// most lowers the larger max/mean of the worst step and its partner step, until none
// lowers it or `max_swaps` were made.
void swap_to_level(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                   size_t max_swaps);

// Lumps that fill whole steps (costs dearest first, a multiple of `world_size` of them)
// dealt evenly over costs.size() / world_size steps, rather than in runs: the lumps
// below the dearest cost are dealt like longest-processing-time scheduling of their
// shortfalls (the largest first, each to the step short by the least so far with a
// rank free), and the lumps at the dearest cost fill the ranks left. A plateau at the
// dearest cost is then shared by every step, and the sparser lumps below it scattered
// among them. The steps, as indices into `costs`.
std::vector<std::vector<size_t>> deal_lumps_evenly(std::span<const double> costs,
                                                   size_t world_size);

}  // namespace evenfeed
