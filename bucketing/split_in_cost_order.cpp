#include "bucketing/split_in_cost_order.h"

#include <algorithm>
#include <iterator>

#include "bucketing/cost_model.h"

namespace evenfeed {
namespace {

// What the search keeps of each step: its cheapest and dearest batch and its sum.
struct Range {
  double cheapest = 0, dearest = 0, sum = 0;
};

class CostOrderSplitter {
 public:
  CostOrderSplitter(std::span<const double> costs, std::vector<std::vector<size_t>>& steps)
      : costs_(costs), steps_(steps), by_cost_(steps.size()), ranges_(steps.size()) {
    for (size_t s = 0; s < steps_.size(); ++s) sort_and_measure(s);
  }

  // One pass over every pair; the splits made.
  size_t pass() {
    size_t splits = 0;
    for (size_t a = 0; a < steps_.size(); ++a)
      for (size_t b = a + 1; b < steps_.size(); ++b)
        if (overlap(a, b) && split_if_better(a, b)) ++splits;
    return splits;
  }

 private:
  // Step s's batches dearest first (ties in their order), and its range. The step
  // itself keeps its order (its ranks) until it is split.
  void sort_and_measure(size_t s) {
    std::vector<size_t>& step = by_cost_[s];
    step = steps_[s];
    std::stable_sort(step.begin(), step.end(),
                     [&](size_t x, size_t y) { return costs_[x] > costs_[y]; });
    Range r;
    if (!step.empty()) {
      r.dearest = costs_[step.front()];
      r.cheapest = costs_[step.back()];
    }
    for (size_t id : steps_[s]) r.sum += costs_[id];
    ranges_[s] = r;
  }

  // Whether some batch of each step is cheaper than the other's dearest: otherwise the
  // two are in cost order already.
  bool overlap(size_t a, size_t b) const {
    return steps_[a].size() == steps_[b].size() && !steps_[a].empty() &&
           ranges_[a].cheapest < ranges_[b].dearest && ranges_[b].cheapest < ranges_[a].dearest;
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
    const bool a_dearer = ranges_[a].dearest >= ranges_[b].dearest;
    const size_t dearer = a_dearer ? a : b, other = a_dearer ? b : a;
    merge(a, b);
    Range dear{costs_[merged_[width - 1]], costs_[merged_.front()], 0};
    Range cheap{costs_[merged_.back()], costs_[merged_[width]], 0};
    for (size_t k = 0; k < width; ++k) {
      dear.sum += costs_[merged_[k]];
      cheap.sum += costs_[merged_[width + k]];
    }
    const double before_dearer = imbalance(ranges_[dearer], width);
    const double before_other = imbalance(ranges_[other], width);
    const double after_dear = imbalance(dear, width), after_cheap = imbalance(cheap, width);
    if (std::max(after_dear, after_cheap) > std::max(before_dearer, before_other) + 1e-12)
      return false;
    if (after_dear + after_cheap >= before_dearer + before_other - 1e-9) return false;
    steps_[dearer].assign(merged_.begin(), merged_.begin() + static_cast<long>(width));
    steps_[other].assign(merged_.begin() + static_cast<long>(width), merged_.end());
    by_cost_[dearer] = steps_[dearer];
    by_cost_[other] = steps_[other];
    ranges_[dearer] = dear;
    ranges_[other] = cheap;
    return true;
  }

  static double imbalance(const Range& r, size_t width) {
    return step_imbalance(r.dearest, r.sum, width);
  }

  std::span<const double> costs_;
  std::vector<std::vector<size_t>>& steps_;
  std::vector<std::vector<size_t>> by_cost_;  // each step's batches, dearest first
  std::vector<Range> ranges_;
  std::vector<size_t> merged_;  // reused by every pair
};

}  // namespace

size_t split_in_cost_order(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                           const CostOrderSplitOptions& options) {
  if (steps.size() < 2) return 0;
  CostOrderSplitter splitter(costs, steps);
  size_t splits = 0;
  for (size_t p = 0; p < options.max_passes; ++p) {
    const size_t made = splitter.pass();
    if (made == 0) break;
    splits += made;
  }
  return splits;
}

}  // namespace evenfeed
