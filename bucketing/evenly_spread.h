// A few of many candidates, evenly spread.
//
// WindowPlanner::split_off_light_tail weighs splitting a final step at its batch
// boundaries, each weighing two cuts of up to the whole step W ways. At 64 ranks and
// fewer it weighs every boundary; at a thousand ranks that was a thousand weighings per
// final step and minutes per plan, and neighbouring boundaries of so many batches split
// off nearly the same samples. evenly_spread keeps at most `most` of them, spread over
// the whole range, so the search still reaches both ends.
#pragma once

#include <cstddef>
#include <vector>

namespace evenfeed {

// At most `most` (at least 2) of `values`: all of them when there are no more, else the
// ones at positions k x (size - 1) / (most - 1) for k = 0 .. most - 1, so the first and
// the last are kept and no position is taken twice. Order is kept.
inline std::vector<size_t> evenly_spread(std::vector<size_t> values, size_t most) {
  if (values.size() <= most || most < 2) return values;
  std::vector<size_t> kept;
  kept.reserve(most);
  for (size_t k = 0; k < most; ++k) kept.push_back(values[k * (values.size() - 1) / (most - 1)]);
  return kept;
}

}  // namespace evenfeed
