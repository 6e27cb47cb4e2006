#include "bucketing/leftover_scan.h"

#include <algorithm>
#include <cmath>

namespace evenfeed {
namespace {

// A level is given up once the least its max/mean can be exceeds `beat` by this share:
// far above the rounding of the two ways of working it out (the bound's sum and the
// finished one's), so a level given up could never have been kept.
constexpr double kRatioMargin = 1e-9;

}  // namespace

std::optional<double> first_segments_ratio(const GreedySegments& greedy, const LeftoverScan& scan,
                                           double level, double beat) {
  const size_t W = scan.world_size;
  // Each segment still to cut costs at most the level, or one sample alone where that
  // is more: the most the mean can still rise, so the least max/mean can still be.
  const double most_per_segment = std::max(level, scan.dearest_alone);
  double total = 0, dearest = 0;
  size_t made = 0;
  for (size_t next = 0; next < greedy.all().to && made < W; ++made) {
    uint64_t longest = 0;
    const size_t begin = next;
    next = greedy.end(begin, level, longest);
    const double cost = scan.cost.batch(next - begin, longest);
    total += cost;
    dearest = std::max(dearest, cost);
    const double at_least = dearest * static_cast<double>(W) /
                            (total + static_cast<double>(W - made - 1) * most_per_segment);
    if (at_least > beat * (1 + kRatioMargin)) return std::nullopt;
  }
  if (made < W) return std::nullopt;
  return total > 0 ? dearest * static_cast<double>(W) / total : 1.0;
}

std::optional<LeftoverCut> most_level_cut(const GreedySegments& greedy, const LeftoverScan& scan,
                                          double beat) {
  std::optional<LeftoverCut> best;
  for (int k = 0; k <= scan.levels; ++k) {
    const double level =
        scan.low * std::pow(scan.high / scan.low, static_cast<double>(k) / scan.levels);
    const double to_beat = best ? std::min(best->ratio, beat) : beat;
    const std::optional<double> ratio = first_segments_ratio(greedy, scan, level, to_beat);
    if (ratio && *ratio < to_beat) best = LeftoverCut{level, *ratio};
  }
  return best;
}

}  // namespace evenfeed
