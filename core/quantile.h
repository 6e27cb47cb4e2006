// Nearest-rank quantiles of sorted values, shared by the dataset summary and the plan
// metrics so both report percentiles the same way.
#pragma once

#include <cstddef>
#include <vector>

namespace evenfeed {

// The value at quantile q (0..1) of `sorted` (ascending, non-empty).
template <typename T>
T quantile_of_sorted(const std::vector<T>& sorted, double q) {
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

}  // namespace evenfeed
