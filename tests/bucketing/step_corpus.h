// Windows of steps for the tests of the passes that move single samples between
// steps (level_by_moves, absorb_negligible_steps): each step a list of ranks' batches,
// each batch positions into a list of lengths, and what they cost under the quadratic
// model.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bucketing/cost_model.h"
#include "core/philox.h"

namespace evenfeed::step_test {

inline const CostModel kQuadratic{CostKind::kQuadratic, 2048};
using Steps = std::vector<std::vector<std::vector<size_t>>>;

struct Corpus {
  std::vector<uint64_t> lengths;
  Steps steps;
  // Appends a batch of `count` samples of `length` to step `s` (made as needed).
  void batch(size_t s, size_t count, uint64_t length) {
    if (steps.size() <= s) steps.resize(s + 1);
    std::vector<size_t>& b = steps[s].emplace_back();
    for (size_t k = 0; k < count; ++k) {
      b.push_back(lengths.size());
      lengths.push_back(length);
    }
  }
};

// Uniform integers in [lo, hi], each draw the next counter of (seed, `stream`): the
// random windows of a test, the same on every run.
class UniformDraws {
 public:
  UniformDraws(uint64_t seed, uint32_t stream) : seed_(seed), stream_(stream) {}
  uint64_t operator()(uint64_t lo, uint64_t hi) {
    CounterRng rng(seed_, RngStream::kSynth, stream_, draw_++);
    return lo + static_cast<uint64_t>(rng.uniform() * static_cast<double>(hi - lo + 1));
  }

 private:
  uint64_t seed_;
  uint32_t stream_;
  uint64_t draw_ = 0;
};

inline double batch_cost(const std::vector<uint64_t>& lengths, const std::vector<size_t>& batch) {
  uint64_t longest = 0;
  for (size_t k : batch) longest = std::max(longest, lengths[k]);
  return batch.empty() ? 0.0 : kQuadratic.batch(batch.size(), longest);
}

inline double dearest(const std::vector<uint64_t>& lengths,
                      const std::vector<std::vector<size_t>>& step) {
  double most = 0;
  for (const auto& b : step) most = std::max(most, batch_cost(lengths, b));
  return most;
}

// max/mean of a step's batch costs (1 when it costs nothing).
inline double ratio(const std::vector<uint64_t>& lengths,
                    const std::vector<std::vector<size_t>>& step) {
  double sum = 0;
  for (const auto& b : step) sum += batch_cost(lengths, b);
  return sum > 0 ? dearest(lengths, step) * static_cast<double>(step.size()) / sum : 1.0;
}

// Padded token slots (count x longest) of all the steps' batches.
inline double slots(const std::vector<uint64_t>& lengths, const Steps& steps) {
  double total = 0;
  for (const auto& step : steps) {
    for (const auto& b : step) {
      uint64_t longest = 0;
      for (size_t k : b) longest = std::max(longest, lengths[k]);
      total += static_cast<double>(b.size() * longest);
    }
  }
  return total;
}

}  // namespace evenfeed::step_test
