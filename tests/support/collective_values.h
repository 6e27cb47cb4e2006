// Values for collective tests whose results are known in closed form: rank r
// contributes r + 1 + (i % 7) at element i. Small integers, exact in float32 and in
// bfloat16, so sums (and, for float32, averages) can be compared exactly.
#pragma once

#include <cstddef>
#include <vector>

namespace evenfeed::testing {

inline std::vector<float> contribution(int rank, size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(rank + 1) + static_cast<float>(i % 7);
  return values;
}

// Element i summed over ranks 0 .. world - 1.
inline float expected_sum(int world, size_t i) {
  return static_cast<float>(world * (world + 1) / 2) +
         static_cast<float>(world) * static_cast<float>(i % 7);
}

}  // namespace evenfeed::testing
