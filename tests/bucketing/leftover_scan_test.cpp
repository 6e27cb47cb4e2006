// The leftover's scan (leftover_scan.h) against the plain scan it stands for: every
// level's W segments cut one sample at a time (scan_segment_end), max/mean worked out
// in full, the first of the least kept. Giving up levels that cannot beat the best so
// far, or a best from outside, must never change the answer where it is below that.
#include "bucketing/leftover_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

namespace evenfeed {
namespace {

// Long-tailed lengths with ties, in the planner's noisy longest-first order.
std::vector<uint64_t> noisy_longest_first(size_t n, std::mt19937_64& rng) {
  std::lognormal_distribution<double> body(std::log(300.0), 1.3);
  std::uniform_real_distribution<double> noise(0, 0.4);
  std::vector<std::pair<double, uint64_t>> keyed;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t l = std::clamp<uint64_t>(static_cast<uint64_t>(body(rng)), 1, 8192);
    keyed.push_back({std::log(static_cast<double>(l)) + noise(rng), l});
  }
  std::sort(keyed.begin(), keyed.end(), std::greater<>());
  std::vector<uint64_t> lengths;
  for (const auto& [key, l] : keyed) lengths.push_back(l);
  return lengths;
}

std::optional<LeftoverCut> plain_scan(const std::vector<uint64_t>& lengths,
                                      const BatchLimits& limits, const LeftoverScan& scan) {
  std::optional<LeftoverCut> best;
  for (int k = 0; k <= scan.levels; ++k) {
    const double level =
        scan.low * std::pow(scan.high / scan.low, static_cast<double>(k) / scan.levels);
    double total = 0, dearest = 0;
    size_t made = 0;
    for (size_t next = 0; next < lengths.size() && made < scan.world_size; ++made) {
      uint64_t longest = 0;
      const size_t begin = next;
      next = scan_segment_end(
          lengths.size(), begin, level, limits, [&](size_t i) { return lengths[i]; }, longest);
      const double cost = scan.cost.batch(next - begin, longest);
      total += cost;
      dearest = std::max(dearest, cost);
    }
    if (made < scan.world_size) continue;
    const double ratio = dearest * static_cast<double>(scan.world_size) / total;
    if (!best || ratio < best->ratio) best = LeftoverCut{level, ratio};
  }
  return best;
}

TEST(LeftoverScan, FindsThePlainScansLevelAndGivesUpOnlyWhatCannotBeatTheBest) {
  std::mt19937_64 rng(17);
  int compared = 0;
  for (const CostModel cost : {CostModel{CostKind::kLinear, 0}, CostModel{}}) {
    for (uint64_t cap : {uint64_t{16}, uint64_t{64}, UINT64_MAX}) {
      for (size_t W : {size_t{4}, size_t{16}, size_t{64}}) {
        const std::vector<uint64_t> lengths = noisy_longest_first(40 * W, rng);
        const BatchLimits limits{.cost = cost, .budget = cost.budget(8192), .cap = cap};
        const GreedySegments greedy(lengths, limits);
        LeftoverScan scan{.world_size = W,
                          .cost = cost,
                          .low = greedy.least_level(greedy.all(), 8 * W, 0, limits.budget, 30),
                          .high = greedy.least_level(greedy.all(), W, 0, limits.budget, 30)};
        for (uint64_t l : lengths)
          scan.dearest_alone = std::max(scan.dearest_alone, cost.batch(1, l));
        const std::optional<LeftoverCut> plain = plain_scan(lengths, limits, scan);
        ASSERT_TRUE(plain.has_value());
        const std::optional<LeftoverCut> fast = most_level_cut(greedy, scan);
        ASSERT_TRUE(fast.has_value());
        EXPECT_EQ(fast->level, plain->level) << "W " << W << " cap " << cap;
        EXPECT_EQ(fast->ratio, plain->ratio);
        // A best from outside: just above the plain answer changes nothing; at it or
        // below, nothing can beat it.
        const std::optional<LeftoverCut> above = most_level_cut(greedy, scan, plain->ratio * 1.001);
        ASSERT_TRUE(above.has_value());
        EXPECT_EQ(above->level, plain->level);
        EXPECT_FALSE(most_level_cut(greedy, scan, plain->ratio).has_value());
        EXPECT_FALSE(most_level_cut(greedy, scan, 1.0).has_value());
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 18);
}

// Fewer samples than segments at every level: no level makes W, whatever the best.
TEST(LeftoverScan, NoLevelWhereTheOrderCannotMakeWSegments) {
  const std::vector<uint64_t> lengths{900, 800, 700};
  const BatchLimits limits{.cost = CostModel{}, .budget = CostModel{}.budget(4096)};
  const GreedySegments greedy(lengths, limits);
  const LeftoverScan scan{.world_size = 4, .cost = CostModel{}, .low = 1e3, .high = limits.budget};
  EXPECT_FALSE(most_level_cut(greedy, scan).has_value());
  EXPECT_FALSE(first_segments_ratio(greedy, scan, scan.low).has_value());
}

}  // namespace
}  // namespace evenfeed
