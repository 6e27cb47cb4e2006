#include "bucketing/lump_step_bound.h"

#include <algorithm>
#include <vector>

namespace evenfeed {
namespace {

// Bisection steps over [1, W]: 2^-50 of W is far below any figure the report prints.
constexpr int kBisections = 50;
// Slack in the comparisons, so that rounding can only lower the bound, never raise it.
constexpr double kSlack = 1e-12;

// The lumps dearest first, as groups; position i is the (i+1)-th dearest lump.
class LumpOrder {
 public:
  LumpOrder(std::span<const LumpGroup> groups, double partner) : partner_(partner) {
    for (const LumpGroup& g : groups) {
      if (g.count == 0) continue;
      cost_.push_back(g.cost);
      end_.push_back(size() + g.count);
      sum_.push_back((sum_.empty() ? 0 : sum_.back()) + static_cast<double>(g.count) * g.cost);
    }
    dearer_than_partner_ = count_above(partner);
  }
  size_t groups() const { return cost_.size(); }
  double cost(size_t g) const { return cost_[g]; }
  uint64_t size() const { return end_.empty() ? 0 : end_.back(); }
  uint64_t begin_of(size_t g) const { return g == 0 ? 0 : end_[g - 1]; }
  uint64_t end_of(size_t g) const { return end_[g]; }
  // How many lumps cost more than `x`.
  uint64_t count_above(double x) const {
    const size_t g =
        std::partition_point(cost_.begin(), cost_.end(), [x](double c) { return c > x; }) -
        cost_.begin();
    return g == 0 ? 0 : end_[g - 1];
  }
  // The excess (cost - partner, where positive) of the i dearest lumps together.
  double excess(uint64_t i) const {
    i = std::min(i, dearer_than_partner_);
    if (i == 0) return 0;
    const size_t g = std::lower_bound(end_.begin(), end_.end(), i) - end_.begin();
    const uint64_t before = begin_of(g);
    const double sum = (g == 0 ? 0 : sum_[g - 1]) + static_cast<double>(i - before) * cost_[g];
    return sum - static_cast<double>(i) * partner_;
  }
  uint64_t dearer_than_partner() const { return dearer_than_partner_; }

 private:
  double partner_;
  std::vector<double> cost_, sum_;
  std::vector<uint64_t> end_;
  uint64_t dearer_than_partner_ = 0;
};

class StepBound {
 public:
  StepBound(const LumpOrder& lumps, double partner, uint64_t world_size)
      : lumps_(lumps), partner_(partner), ranks_(static_cast<double>(world_size)), w_(world_size) {
    // f(h) for each group's cost (argument 1): its step holds at most the W largest
    // excesses of lumps no dearer than it, which start at the group's first lump.
    for (size_t g = 0; g < lumps_.groups(); ++g) {
      const uint64_t first = lumps_.begin_of(g);
      const double most = lumps_.excess(first + w_) - lumps_.excess(first);
      one_step_.push_back(ranks_ * lumps_.cost(g) / (ranks_ * partner_ + most));
    }
  }

  // Whether the arguments leave room for a plan whose worst step is within `r`.
  bool passes(double r) const {
    if (one_step_[0] > r + kSlack) return false;  // the dearest lump's own step
    // next_good[g]: the first group after g (cheaper) whose step can be within r.
    const size_t n = lumps_.groups();
    std::vector<size_t> next_good(n, n);
    for (size_t g = n - 1; g-- > 0;)
      next_good[g] = one_step_[g + 1] <= r + kSlack ? g + 1 : next_good[g + 1];
    double heads = 0;  // the costs of lumps 1, W + 1, 2 W + 1, ... among groups so far
    for (size_t g = 0; g < n && lumps_.cost(g) > r * partner_; ++g) {
      heads += lumps_.cost(g) * static_cast<double>(heads_before(lumps_.end_of(g)) -
                                                    heads_before(lumps_.begin_of(g)));
      const double below = next_good[g] < n ? lumps_.cost(next_good[g]) : 0;
      const uint64_t must_hold = lumps_.count_above(std::max(below, r * partner_));
      if (!some_step_count_passes(g, heads, must_hold, r)) return false;
    }
    return true;
  }

 private:
  // How many of positions 0, W, 2 W, ... are below `end`.
  uint64_t heads_before(uint64_t end) const { return (end + w_ - 1) / w_; }

  // Argument 2 at theta = group g's cost: some step count k in [max(q, held / W), n_theta]
  // whose k steps' excess needed is at most the k W largest excesses.
  bool some_step_count_passes(size_t g, double heads, uint64_t must_hold, double r) const {
    const double theta = lumps_.cost(g);
    const uint64_t n_theta = lumps_.end_of(g), q = heads_before(n_theta);
    const uint64_t lo = std::max(q, (must_hold + w_ - 1) / w_), hi = n_theta;
    if (lo > hi) return false;
    const double per_step = ranks_ * (theta / r - partner_);  // each step after the q
    auto shortfall = [&](uint64_t k) {
      const double needed = ranks_ * heads / r - static_cast<double>(q) * ranks_ * partner_ +
                            static_cast<double>(k - q) * per_step;
      return needed - lumps_.excess(k * w_);
    };
    // shortfall(k + 1) - shortfall(k) grows with k: the least is where it stops falling.
    auto rising = [&](uint64_t k) {
      return per_step >= lumps_.excess((k + 1) * w_) - lumps_.excess(k * w_);
    };
    uint64_t a = lo, b = hi;  // the first k in [lo, hi] that is rising, or hi
    while (a < b) {
      const uint64_t mid = a + (b - a) / 2;
      if (rising(mid))
        b = mid;
      else
        a = mid + 1;
    }
    return shortfall(a) <= kSlack * std::max(1.0, ranks_ * heads);
  }

  const LumpOrder& lumps_;
  double partner_, ranks_;
  uint64_t w_;
  std::vector<double> one_step_;
};

}  // namespace

double lump_step_bound(std::span<const LumpGroup> lumps, double partner, uint64_t world_size) {
  const LumpOrder order(lumps, partner);
  if (order.size() == 0 || world_size <= 1) return 1;
  const StepBound bound(order, partner, world_size);
  double fails = 1, passes = static_cast<double>(world_size);  // every plan is within W
  if (bound.passes(fails)) return 1;
  for (int i = 0; i < kBisections; ++i) {
    const double mid = (fails + passes) / 2;
    (bound.passes(mid) ? passes : fails) = mid;
  }
  return fails;
}

}  // namespace evenfeed
