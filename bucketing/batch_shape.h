// A batch of samples given as positions into a list of lengths, by what it costs: its
// count, its longest sample, and count x f(longest) under the cost model. Shared by
// the passes that move single samples between a window's batches (level_by_moves.h,
// absorb_steps.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct BatchShape {
  uint64_t count = 0;
  uint64_t longest = 0;
  double cost = 0;
};

inline BatchShape shape_of(std::span<const uint64_t> lengths, const std::vector<size_t>& batch,
                           const CostModel& cost) {
  BatchShape shape;
  shape.count = batch.size();
  for (size_t k : batch) shape.longest = std::max(shape.longest, lengths[k]);
  shape.cost = batch.empty() ? 0.0 : cost.batch(shape.count, shape.longest);
  return shape;
}

}  // namespace evenfeed
