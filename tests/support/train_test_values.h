// Values shared by the tests that compare the trainer's GPU path (or the arithmetic of
// its kernels) with the CPU reference: seeded random arrays, and optimiser settings
// that exercise every term (weight decay, warm-up, then the cosine).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "trainer/optimizer.h"

namespace evenfeed::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

inline OptimizerOptions optimizer_with_every_term(OptimizerKind kind) {
  OptimizerOptions o;
  o.kind = kind;
  o.lr = 0.05;
  o.weight_decay = 0.01;
  o.warmup_steps = 1;
  o.total_steps = 5;
  return o;
}

}  // namespace evenfeed::testing
