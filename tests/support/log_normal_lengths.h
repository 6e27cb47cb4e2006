// Log-normal lengths from a fixed seed, the same on every machine with IEEE doubles and
// glibc's libm (bench/make_length_shapes.py draws its "small" shape from Python's own
// generator instead, which C++ cannot repeat).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

#include "core/philox.h"

namespace evenfeed::testing {

// `n` lengths, each exp(log(median) + sigma z) cut down to an integer, at least 1, with z
// standard normal by Box-Muller from splitmix64 at `seed`.
inline std::vector<uint64_t> log_normal_lengths(uint64_t seed, size_t n, double median = 500,
                                                double sigma = 1) {
  uint64_t state = seed;
  auto uniform = [&] {
    state += 0x9e3779b97f4a7c15ULL;
    return static_cast<double>(mix64(state) >> 11) * 0x1p-53;
  };
  std::vector<uint64_t> out(n);
  for (uint64_t& length : out) {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    length = std::max<uint64_t>(1, static_cast<uint64_t>(std::exp(std::log(median) + sigma * z)));
  }
  return out;
}

}  // namespace evenfeed::testing
