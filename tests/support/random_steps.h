// Random plans of steps for the tests of batch exchanges between steps (swap_to_level,
// shed_to_level, split_in_cost_order): a small deterministic generator, lumpy batch
// costs, and what the tests measure of a step (each a list of indices into the costs).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace evenfeed::testing {

// A 64-bit linear congruential generator: uniform doubles in [0, 1), the same on every
// platform.
struct Lcg {
  uint64_t state;
  double operator()() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  }
};

// A random number of ranks W (2-11) and steps (2-7), and W x steps batch costs: a few
// dear batches (0.6-1.0) among cheap ones (0.01-0.31), with ties (0.25).
struct LumpyCosts {
  size_t world_size = 0, step_count = 0;
  std::vector<double> costs;
};

inline LumpyCosts lumpy_costs(Lcg& uniform) {
  LumpyCosts out;
  out.world_size = static_cast<size_t>(2 + uniform() * 10);
  out.step_count = static_cast<size_t>(2 + uniform() * 6);
  out.costs.resize(out.world_size * out.step_count);
  for (double& c : out.costs) {
    const double u = uniform();
    c = u < 0.15 ? 0.6 + 0.4 * uniform() : u < 0.3 ? 0.25 : 0.01 + 0.3 * uniform();
  }
  return out;
}

using Steps = std::vector<std::vector<size_t>>;

inline double dearest(const std::vector<double>& costs, const std::vector<size_t>& step) {
  double d = 0;
  for (size_t id : step) d = std::max(d, costs[id]);
  return d;
}

inline double max_over_mean(const std::vector<double>& costs, const std::vector<size_t>& step) {
  double sum = 0;
  for (size_t id : step) sum += costs[id];
  return sum > 0 ? dearest(costs, step) * static_cast<double>(step.size()) / sum : 1.0;
}

// Steps of indices 0, 1, ... in order, `width` at a time.
inline Steps steps_in_order(size_t count, size_t width) {
  Steps steps(count / width);
  for (size_t k = 0; k < count; ++k) steps[k / width].push_back(k);
  return steps;
}

// The batches dealt at random among the steps (each `width` wide), so that steps are not
// runs of the cost order.
inline void shuffle_batches(Steps& steps, size_t width, Lcg& uniform) {
  const size_t count = steps.size() * width;
  for (size_t k = count; k-- > 1;) {
    const auto j = static_cast<size_t>(uniform() * static_cast<double>(k + 1));
    std::swap(steps[k / width][k % width], steps[j / width][j % width]);
  }
}

// Steps of `count` batches, `width` at a time, dealt at random.
inline Steps shuffled_steps(size_t count, size_t width, Lcg& uniform) {
  Steps steps = steps_in_order(count, width);
  shuffle_batches(steps, width, uniform);
  return steps;
}

// Whether every step is `width` wide and every batch 0..count-1 is in exactly one step.
inline bool holds_each_batch_once(const Steps& steps, size_t width, size_t count) {
  std::vector<size_t> seen;
  for (const auto& step : steps) {
    if (step.size() != width) return false;
    seen.insert(seen.end(), step.begin(), step.end());
  }
  std::sort(seen.begin(), seen.end());
  if (seen.size() != count) return false;
  for (size_t k = 0; k < count; ++k)
    if (seen[k] != k) return false;
  return true;
}

}  // namespace evenfeed::testing
