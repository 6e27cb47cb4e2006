// Costs dearest first, held as groups of one cost: how many there are, the i-th dearest
// and the sum of the i dearest, each in O(log groups), whatever the count. The imbalance
// bounds (imbalance_bound.h, lump_step_bound.h) keep the lumps and the reaches this way,
// so their memory grows with the distinct lengths, not with the samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace evenfeed {

struct CostGroup {
  double cost = 0;     // in budgets
  uint64_t count = 0;  // how many have this cost
};

class CostGroups {
 public:
  // `groups` dearest first (groups of no members are skipped).
  explicit CostGroups(std::span<const CostGroup> groups);

  size_t groups() const { return cost_.size(); }
  double cost(size_t g) const { return cost_[g]; }
  uint64_t begin_of(size_t g) const { return g == 0 ? 0 : end_[g - 1]; }
  uint64_t end_of(size_t g) const { return end_[g]; }
  uint64_t size() const { return end_.empty() ? 0 : end_.back(); }
  double dearest() const { return cost_.empty() ? 0 : cost_[0]; }
  // How many cost more than `x`.
  uint64_t count_above(double x) const;
  // The cost at position i, the (i+1)-th dearest (0 past the end).
  double at(uint64_t i) const;
  // The sum of the i dearest (all of them when there are fewer).
  double top(uint64_t i) const;

 private:
  std::vector<double> cost_, sum_;
  std::vector<uint64_t> end_;
};

}  // namespace evenfeed
