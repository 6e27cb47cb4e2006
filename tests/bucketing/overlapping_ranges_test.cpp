// OverlappingRanges: the ranges that start below one value and end above another, found
// in its tree, are exactly those a scan of every range finds, through sets and clears
// at random; ends equal to the query's are left out on both sides.
#include "bucketing/overlapping_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

std::vector<size_t> found(const OverlappingRanges& ranges, double above, double below) {
  std::vector<size_t> owners;
  ranges.find(above, below, owners);
  std::sort(owners.begin(), owners.end());
  return owners;
}

// Starts at 0.2, 0.5, 0.5 (a tie) and 0.9.
TEST(OverlappingRanges, FindsRangesStrictlyAcrossTheQuery) {
  const std::vector<double> starts = {0.5, 0.2, 0.9, 0.5};
  OverlappingRanges ranges(starts);
  ranges.set(0, 0.6, 10);  // [0.5, 0.6]
  ranges.set(1, 0.3, 11);  // [0.2, 0.3]
  ranges.set(2, 1.0, 12);  // [0.9, 1.0]
  ranges.set(3, 0.5, 13);  // [0.5, 0.5]
  EXPECT_EQ(found(ranges, 0.3, 0.9), (std::vector<size_t>{10, 13}));
  EXPECT_EQ(found(ranges, 0.5, 0.95), (std::vector<size_t>{10, 12}));
  EXPECT_EQ(found(ranges, 0.0, 0.5), (std::vector<size_t>{11}));
  EXPECT_EQ(found(ranges, 0.0, 2.0), (std::vector<size_t>{10, 11, 12, 13}));
  ranges.clear(0);
  EXPECT_EQ(found(ranges, 0.3, 0.9), (std::vector<size_t>{13}));
  ranges.set(0, 0.95, 14);  // [0.5, 0.95], a new owner at the same start
  EXPECT_EQ(found(ranges, 0.6, 0.9), (std::vector<size_t>{14}));
}

// Random starts with many ties, ranges set, moved and cleared at random; after each
// change a random query against a scan of the ranges held.
TEST(OverlappingRanges, AgreesWithAScanOfEveryRange) {
  testing::Lcg uniform{44};
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  for (int round = 0; round < 40; ++round) {
    const auto count = static_cast<size_t>(1 + uniform() * 300);
    std::vector<double> starts(count);
    for (double& s : starts) s = std::floor(uniform() * 50) / 50;  // ties on purpose
    OverlappingRanges ranges(starts);
    std::vector<double> high(count, kNone);
    for (int change = 0; change < 200; ++change) {
      const auto low = static_cast<size_t>(uniform() * static_cast<double>(count));
      if (uniform() < 0.3) {
        ranges.clear(low);
        high[low] = kNone;
      } else {
        high[low] = starts[low] + std::floor(uniform() * 20) / 50;
        ranges.set(low, high[low], low);
      }
      const double above = std::floor(uniform() * 60) / 50, below = std::floor(uniform() * 60) / 50;
      std::vector<size_t> scanned;
      for (size_t k = 0; k < count; ++k)
        if (high[k] != kNone && starts[k] < below && high[k] > above) scanned.push_back(k);
      ASSERT_EQ(found(ranges, above, below), scanned) << "round " << round << " change " << change;
    }
  }
}

}  // namespace
}  // namespace evenfeed
