#include "bucketing/split_in_cost_order.h"

#include <algorithm>
#include <iterator>

#include "bucketing/cost_model.h"
#include "bucketing/overlapping_ranges.h"

namespace evenfeed {
namespace {

class CostOrderSplitter {
 public:
  CostOrderSplitter(std::span<const double> costs, std::vector<std::vector<size_t>>& steps)
      : costs_(costs),
        steps_(steps),
        by_cost_(steps.size()),
        sums_(steps.size(), 0.0),
        ranges_(costs) {
    for (size_t s = 0; s < steps_.size(); ++s) {
      sort_and_sum(s);
      if (!steps_[s].empty()) ranges_.set(by_cost_[s].back(), dearest(s), s);
    }
  }

  // One pass over every pair (a, b), a < b, in that order; the splits made. Each pair
  // is asked in turn, the plain way: the reference for pass().
  size_t pass_over_all_pairs() {
    size_t splits = 0;
    for (size_t a = 0; a < steps_.size(); ++a)
      for (size_t b = a + 1; b < steps_.size(); ++b)
        if (overlap(a, b) && split_if_better(a, b)) ++splits;
    return splits;
  }

  // The same pass, the same pairs split in the same order, asking only the pairs whose
  // cost ranges overlap: those are found by cost (ranges_), not by trying every later
  // step. A window of steps of one or two samples a batch holds a hundred thousand
  // steps or more, and asking all their pairs took minutes. Pairs that do not overlap
  // are skipped by the plain pass too, and a pair that is not split changes nothing, so
  // the overlapping steps after `a` are gathered once and asked in index order; a split
  // changes a's range, so they are gathered again after it.
  size_t pass() {
    size_t splits = 0;
    for (size_t a = 0; a < steps_.size(); ++a) {
      size_t after = a;
      for (bool gather = !steps_[a].empty(); gather;) {
        gather = false;
        for (size_t b : overlapping_after(a, after)) {
          if (!split_if_better(a, b)) continue;
          ++splits;
          after = b;
          gather = true;
          break;
        }
      }
    }
    return splits;
  }

 private:
  // Step s's batches dearest first (ties in their order), and its sum. The step itself
  // keeps its order (its ranks) until it is split.
  void sort_and_sum(size_t s) {
    by_cost_[s] = steps_[s];
    std::stable_sort(by_cost_[s].begin(), by_cost_[s].end(),
                     [&](size_t x, size_t y) { return costs_[x] > costs_[y]; });
    for (size_t id : steps_[s]) sums_[s] += costs_[id];
  }

  // Of a step that is not empty.
  double dearest(size_t s) const { return costs_[by_cost_[s].front()]; }
  double cheapest(size_t s) const { return costs_[by_cost_[s].back()]; }
  double imbalance(size_t s) const {
    return step_imbalance(dearest(s), sums_[s], steps_[s].size());
  }

  // Whether some batch of each step is cheaper than the other's dearest: otherwise the
  // two are in cost order already.
  bool overlap(size_t a, size_t b) const {
    return steps_[a].size() == steps_[b].size() && !steps_[a].empty() && cheapest(a) < dearest(b) &&
           cheapest(b) < dearest(a);
  }

  // The steps after `after` whose ranges overlap a's (overlap(a, b)), in index order.
  const std::vector<size_t>& overlapping_after(size_t a, size_t after) {
    found_.clear();
    ranges_.find(cheapest(a), dearest(a), found_);
    std::erase_if(found_, [&](size_t b) { return b <= after || !overlap(a, b); });
    std::sort(found_.begin(), found_.end());
    return found_;
  }

  // Steps a and b's batches in cost order, a's first on ties, into merged_.
  void merge(size_t a, size_t b) {
    merged_.clear();
    std::merge(by_cost_[a].begin(), by_cost_[a].end(), by_cost_[b].begin(), by_cost_[b].end(),
               std::back_inserter(merged_),
               [&](size_t x, size_t y) { return costs_[x] > costs_[y]; });
  }

  bool split_if_better(size_t a, size_t b) {
    const size_t width = steps_[a].size();
    // The dearer half goes to the step that held the dearest batch.
    const size_t dearer = dearest(a) >= dearest(b) ? a : b, other = dearer == a ? b : a;
    merge(a, b);
    double dear_sum = 0, cheap_sum = 0;
    for (size_t k = 0; k < width; ++k) {
      dear_sum += costs_[merged_[k]];
      cheap_sum += costs_[merged_[width + k]];
    }
    const double before_dearer = imbalance(dearer), before_other = imbalance(other);
    const double after_dear = step_imbalance(costs_[merged_.front()], dear_sum, width);
    const double after_cheap = step_imbalance(costs_[merged_[width]], cheap_sum, width);
    if (std::max(after_dear, after_cheap) > std::max(before_dearer, before_other) + 1e-12)
      return false;
    if (after_dear + after_cheap >= before_dearer + before_other - 1e-9) return false;
    ranges_.clear(by_cost_[a].back());
    ranges_.clear(by_cost_[b].back());
    steps_[dearer].assign(merged_.begin(), merged_.begin() + static_cast<long>(width));
    steps_[other].assign(merged_.begin() + static_cast<long>(width), merged_.end());
    by_cost_[dearer] = steps_[dearer];
    by_cost_[other] = steps_[other];
    sums_[dearer] = dear_sum;
    sums_[other] = cheap_sum;
    ranges_.set(by_cost_[a].back(), dearest(a), a);
    ranges_.set(by_cost_[b].back(), dearest(b), b);
    return true;
  }

  std::span<const double> costs_;
  std::vector<std::vector<size_t>>& steps_;
  std::vector<std::vector<size_t>> by_cost_;  // each step's batches, dearest first
  std::vector<double> sums_;                  // each step's cost
  std::vector<size_t> merged_;                // reused by every pair
  OverlappingRanges ranges_;                  // each step's, keyed by its cheapest batch
  std::vector<size_t> found_;                 // reused by overlapping_after
};

}  // namespace

namespace {

template <class Pass>
size_t split_in_passes(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                       const CostOrderSplitOptions& options, Pass pass) {
  if (steps.size() < 2) return 0;
  CostOrderSplitter splitter(costs, steps);
  size_t splits = 0;
  for (size_t p = 0; p < options.max_passes; ++p) {
    const size_t made = pass(splitter);
    if (made == 0) break;
    splits += made;
  }
  return splits;
}

}  // namespace

size_t split_in_cost_order(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                           const CostOrderSplitOptions& options) {
  return split_in_passes(costs, steps, options, [](CostOrderSplitter& s) { return s.pass(); });
}

size_t split_in_cost_order_over_all_pairs(std::span<const double> costs,
                                          std::vector<std::vector<size_t>>& steps,
                                          const CostOrderSplitOptions& options) {
  return split_in_passes(costs, steps, options,
                         [](CostOrderSplitter& s) { return s.pass_over_all_pairs(); });
}

}  // namespace evenfeed
