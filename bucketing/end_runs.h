// The runs of an order that start at its first sample or end at its last, weighed
// without a pass over each run.
//
// WindowPlanner::split_off_light_tail cuts a final step's samples in two at every one of
// its batches, and each part is a run from the first sample or to the last: at a
// thousand ranks, a thousand runs of up to the whole step (hundreds of thousands of
// samples), each needing its longest sample and its summed cost before its cut is
// bisected. EndRuns keeps the longest from each end and the summed cost before each
// sample.
//
// The sum must be bit for bit what adding the run up in order gives: the bisection
// starts from it, and a different last bit can end the bisection at another level. A
// difference of two running sums is that only when no addition rounds: every cost a
// whole number (the linear model always, the quadratic one with a whole `a`) and all of
// them together under 2^53. Otherwise total() says so, and the caller adds the run up.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "bucketing/cost_model.h"
#include "bucketing/greedy_segments.h"

namespace evenfeed {

class EndRuns {
 public:
  // `samples[k].length` is sample k's length.
  template <class Samples>
  EndRuns(const Samples& samples, const CostModel& cost)
      : longest_from_(samples.size() + 1, 0),
        longest_before_(samples.size() + 1, 0),
        cost_before_(samples.size() + 1, 0) {
    const size_t n = samples.size();
    for (size_t k = n; k-- > 0;)
      longest_from_[k] = std::max(longest_from_[k + 1], samples[k].length);
    for (size_t k = 0; k < n; ++k) {
      const double c = cost.per_sample(samples[k].length);
      exact_ = exact_ && c == std::floor(c);
      cost_before_[k + 1] = cost_before_[k] + c;
      longest_before_[k + 1] = std::max(longest_before_[k], samples[k].length);
    }
    exact_ = exact_ && cost_before_[n] < 0x1p53;
  }

  // The longest sample of `run`, which starts at the first sample or ends at the last.
  uint64_t longest(GreedySegments::Run run) const {
    return run.from == 0 ? longest_before_[run.to] : longest_from_[run.from];
  }
  // The summed cost of any run, where it is exact; nothing where it must be added up.
  std::optional<double> total(GreedySegments::Run run) const {
    if (!exact_) return std::nullopt;
    return cost_before_[run.to] - cost_before_[run.from];
  }

 private:
  std::vector<uint64_t> longest_from_, longest_before_;
  std::vector<double> cost_before_;
  bool exact_ = true;
};

}  // namespace evenfeed
