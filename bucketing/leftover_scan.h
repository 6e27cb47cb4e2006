// The scan that chooses the level a regrouped window's step left over is cut at
// (WindowPlanner::regroup_dearest, window_planner_regroup.cpp): of the levels
// low x (high / low)^(k / levels), k = 0..levels, the first whose W greedy segments
// (in the order given, as GreedySegments cuts them) are most level, max/mean of their
// costs. regroup_dearest makes it for each of its 164 choices of levels, and keeps a
// choice only where it beats the best so far; so the scan is told that best (`beat`)
// and gives up each level as soon as the segments cut so far show it cannot come
// below it. The answer is the plain scan's wherever that is below `beat`
// (tests/bucketing/leftover_scan_test.cpp checks it against one); a plan of a few
// thousand samples at 64 ranks spent most of its time here before (docs/plan_history.md,
// thirty-ninth session).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>

#include "bucketing/cost_model.h"
#include "bucketing/greedy_segments.h"

namespace evenfeed {

struct LeftoverCut {
  double level = 0, ratio = 0;  // the level chosen; max/mean of its W segments
};

struct LeftoverScan {
  size_t world_size = 1;  // W: the segments that make the step
  CostModel cost;         // what a segment costs: count x f(its longest)
  double low = 0, high = 0;
  int levels = 121;  // the scan's levels: levels + 1, low to high, geometrically
  // The dearest single sample of the order, alone: no segment of the scan costs more
  // than it or the level, the most a segment still to cut can add to the mean.
  double dearest_alone = 0;
};

// The max/mean of the first W segments `greedy` cuts at `level`; nullopt where it cuts
// fewer, or where it cannot come below `beat`.
std::optional<double> first_segments_ratio(const GreedySegments& greedy, const LeftoverScan& scan,
                                           double level,
                                           double beat = std::numeric_limits<double>::infinity());

// The scan's level (the first of the most level) and its max/mean; nullopt where no
// level cuts W segments or none comes below `beat`.
std::optional<LeftoverCut> most_level_cut(const GreedySegments& greedy, const LeftoverScan& scan,
                                          double beat = std::numeric_limits<double>::infinity());

}  // namespace evenfeed
