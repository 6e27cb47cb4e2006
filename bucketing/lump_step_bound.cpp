#include "bucketing/lump_step_bound.h"

#include <algorithm>
#include <vector>

namespace evenfeed {
namespace {

// Bisection steps over [1, W]: 2^-36 of W is far below any figure the report prints.
constexpr int kBisections = 36;
// Slack in the comparisons, so that rounding can only lower the bound, never raise it.
constexpr double kSlack = 1e-12;
// held_by_steps keeps this many values at most (512 KiB), whatever the corpus.
constexpr uint64_t kMemoSteps = uint64_t{1} << 16;

class StepBound {
 public:
  StepBound(const CostGroups& lumps, const CostGroups& reaches, uint64_t world_size)
      : lumps_(lumps), reaches_(reaches), ranks_(static_cast<double>(world_size)), w_(world_size) {
    // f(h) for each group's cost (argument 1): its step holds at most the W dearest of
    // the lumps no dearer than it, which start at the group's first lump, and the reaches.
    for (size_t g = 0; g < lumps_.groups(); ++g)
      one_step_.push_back(ranks_ * lumps_.cost(g) / most_held(lumps_.begin_of(g), w_));
  }

  // Whether the arguments leave room for a plan whose worst step is within `r`.
  bool passes(double r) const {
    if (one_step_[0] > r + kSlack) return false;  // the dearest lump's own step
    // next_good[g]: the first group after g (cheaper) whose step can be within r.
    const size_t n = lumps_.groups();
    std::vector<size_t> next_good(n, n);
    for (size_t g = n - 1; g-- > 0;)
      next_good[g] = one_step_[g + 1] <= r + kSlack ? g + 1 : next_good[g + 1];
    const double partner = reaches_.dearest();
    double heads = 0;  // the costs of lumps 1, W + 1, 2 W + 1, ... among groups so far
    for (size_t g = 0; g < n && lumps_.cost(g) > partner; ++g) {
      heads += lumps_.cost(g) * static_cast<double>(heads_before(lumps_.end_of(g)) -
                                                    heads_before(lumps_.begin_of(g)));
      const double below = next_good[g] < n ? lumps_.cost(next_good[g]) : 0;
      const uint64_t must_hold = lumps_.count_above(std::max(below, partner));
      if (!some_step_count_passes(g, heads, must_hold, r)) return false;
    }
    return true;
  }

 private:
  // How many of positions 0, W, 2 W, ... are below `end`.
  uint64_t heads_before(uint64_t end) const { return (end + w_ - 1) / w_; }

  // The most `slots` batches can cost: the dearest `slots` of the lumps from position
  // `from` on and the reaches (a partner costs at most its own head's reach). Over how
  // many lumps j are taken, the sum rises while the next lump is dearer than the reach
  // it displaces: the first j where it is not is the most.
  double most_held(uint64_t from, uint64_t slots) const {
    const uint64_t lumps = lumps_.size() - from;
    uint64_t a = slots > reaches_.size() ? slots - reaches_.size() : 0;
    uint64_t b = std::min(slots, lumps);
    if (a > b) return lumps_.top(lumps_.size()) - lumps_.top(from) + reaches_.top(slots);
    while (a < b) {
      const uint64_t j = a + (b - a) / 2;
      if (lumps_.at(from + j) > reaches_.at(slots - j - 1))
        a = j + 1;
      else
        b = j;
    }
    return lumps_.top(from + a) - lumps_.top(from) + reaches_.top(slots - a);
  }

  // The most k steps can hold: the same for every theta and every r, so the first
  // kMemoSteps values are kept (each is a binary search over the lumps taken).
  double held_by_steps(uint64_t k) const {
    if (k >= kMemoSteps) return most_held(0, k * w_);
    if (k >= held_.size()) held_.resize(std::min<uint64_t>(kMemoSteps, 2 * k + 2), -1);
    if (held_[k] < 0) held_[k] = most_held(0, k * w_);
    return held_[k];
  }

  // Argument 2 at theta = group g's cost: some step count k in [max(q, held / W), n_theta]
  // whose k steps' work needed is at most what k W batches can cost.
  bool some_step_count_passes(size_t g, double heads, uint64_t must_hold, double r) const {
    const double theta = lumps_.cost(g);
    const uint64_t n_theta = lumps_.end_of(g), q = heads_before(n_theta);
    const uint64_t lo = std::max(q, (must_hold + w_ - 1) / w_), hi = n_theta;
    if (lo > hi) return false;
    const double per_step = ranks_ * theta / r;  // each step after the q
    auto shortfall = [&](uint64_t k) {
      return ranks_ * heads / r + static_cast<double>(k - q) * per_step - held_by_steps(k);
    };
    // shortfall(k + 1) - shortfall(k) grows with k: the least is where it stops falling.
    auto rising = [&](uint64_t k) { return per_step >= held_by_steps(k + 1) - held_by_steps(k); };
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

  const CostGroups& lumps_;
  const CostGroups& reaches_;
  double ranks_;
  uint64_t w_;
  std::vector<double> one_step_;
  mutable std::vector<double> held_;  // held_by_steps(k), -1 until computed
};

}  // namespace

double lump_step_bound(const CostGroups& lumps, const CostGroups& reaches, uint64_t world_size) {
  if (world_size <= 1 || lumps.size() == 0) return 1;
  const StepBound bound(lumps, reaches, world_size);
  double fails = 1, passes = static_cast<double>(world_size);  // every plan is within W
  if (bound.passes(fails)) return 1;
  for (int i = 0; i < kBisections; ++i) {
    const double mid = (fails + passes) / 2;
    (bound.passes(mid) ? passes : fails) = mid;
  }
  return fails;
}

}  // namespace evenfeed
