// Values shared by the tests that compare the trainer's GPU path (or the arithmetic of
// its kernels) with the CPU reference: seeded random arrays, and optimiser settings
// that exercise every term (weight decay, warm-up, then the cosine), and a token batch
// with every kind of row.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "trainer/model.h"
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

// A padded token batch of `rows` rows: seeded tokens and lengths, one row with no tokens
// (`empty_row`) and one padding row (`padding_row`, valid 0). Host arrays; input()
// points a ModelInput at them.
struct TokenBatch {
  TokenBatch(size_t row_count, uint32_t longest, uint32_t vocab, int classes, uint32_t seed,
             size_t empty_row, size_t padding_row)
      : rows(row_count),
        max_length(longest),
        tokens(rows * max_length, 0),
        labels(rows),
        mask(rows * max_length, 0),
        valid(rows, 1) {
    std::mt19937 rng(seed);
    for (size_t r = 0; r < rows; ++r) {
      const uint32_t length = r == empty_row ? 0 : 1 + rng() % max_length;
      for (uint32_t t = 0; t < length; ++t) {
        tokens[r * max_length + t] = static_cast<int32_t>(rng() % vocab);
        mask[r * max_length + t] = 1;
      }
      labels[r] = static_cast<int32_t>(r % static_cast<size_t>(classes));
    }
    valid[padding_row] = 0;
  }

  ModelInput input() const {
    ModelInput in;
    in.count = rows;
    in.tokens = tokens.data();
    in.mask = mask.data();
    in.max_length = max_length;
    in.labels = labels.data();
    in.valid = valid.data();
    return in;
  }

  size_t rows;
  uint32_t max_length;
  std::vector<int32_t> tokens, labels;
  std::vector<uint8_t> mask, valid;
};

}  // namespace evenfeed::testing
