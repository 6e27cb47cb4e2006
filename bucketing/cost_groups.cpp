#include "bucketing/cost_groups.h"

#include <algorithm>

namespace evenfeed {

CostGroups::CostGroups(std::span<const CostGroup> groups) {
  for (const CostGroup& g : groups) {
    if (g.count == 0) continue;
    cost_.push_back(g.cost);
    end_.push_back(size() + g.count);
    sum_.push_back((sum_.empty() ? 0 : sum_.back()) + static_cast<double>(g.count) * g.cost);
  }
}

uint64_t CostGroups::count_above(double x) const {
  const size_t g =
      std::partition_point(cost_.begin(), cost_.end(), [x](double c) { return c > x; }) -
      cost_.begin();
  return g == 0 ? 0 : end_[g - 1];
}

double CostGroups::at(uint64_t i) const {
  if (i >= size()) return 0;
  return cost_[std::upper_bound(end_.begin(), end_.end(), i) - end_.begin()];
}

double CostGroups::top(uint64_t i) const {
  i = std::min(i, size());
  if (i == 0) return 0;
  const size_t g = std::lower_bound(end_.begin(), end_.end(), i) - end_.begin();
  return (g == 0 ? 0 : sum_[g - 1]) + static_cast<double>(i - begin_of(g)) * cost_[g];
}

}  // namespace evenfeed
