// Random plans of steps for the tests of batch exchanges between steps (swap_to_level,
// shed_to_level): a small deterministic generator, and lumpy batch costs.
#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace evenfeed::testing
