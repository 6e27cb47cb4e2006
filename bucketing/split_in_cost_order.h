// Two steps' batches split again in cost order, where that shortens or levels them.
//
// The swaps (swap_to_level) and the shed (shed_to_level) move one or a few batches
// between steps. Two steps whose cost ranges overlap can do better taken together: of
// their 2W batches, the W dearest in one step and the W cheapest in the other. That
// never lengthens the pair (the step without the dearest batch runs at least as long
// as the (W+1)-th dearest, which is what the cheaper step then runs at), and the
// dearer step has the most work its dearest batch allows. Run after the shed on every
// window of the sweeps' 314 configurations (docs/plan_history.md), it changed 257 plans, each
// quicker: log-normal lengths at 64 ranks, 4,096 tokens, the token bound at the budget,
// mean max/mean 1.0123 -> 1.0076 and useful share 98.48% -> 98.82%.
//
// Taken as a rule for every pair it would not always level: the cheaper half can be
// spread wider than either step was. So a split is made only when the worse of the two
// steps is no less level after it and the two together are more level (the sum of their
// max/mean falls).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace evenfeed {

struct CostOrderSplitOptions {
  // The most passes over all pairs of steps; a pass that splits none ends the search.
  size_t max_passes = 4;
};

// `steps`: indices into `costs`. Splits pairs of steps of equal width whose cost ranges
// overlap, as above, pass after pass. Returns the splits made. Every batch stays in
// exactly one step and every step keeps its width; no split lengthens its two steps
// together or makes the worse of them less level.
size_t split_in_cost_order(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                           const CostOrderSplitOptions& options = {});

// The same splits, found by asking every pair of steps in turn: the plain reference the
// tests hold split_in_cost_order to, pair for pair (it finds the overlapping pairs by
// cost, OverlappingRanges).
size_t split_in_cost_order_over_all_pairs(std::span<const double> costs,
                                          std::vector<std::vector<size_t>>& steps,
                                          const CostOrderSplitOptions& options = {});

}  // namespace evenfeed
