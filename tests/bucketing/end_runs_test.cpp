#include "bucketing/end_runs.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace evenfeed {
namespace {

struct Sample {
  uint64_t length;
};

// The run's sum added up in order and its longest sample: what EndRuns stands in for.
double added_up(const std::vector<Sample>& samples, GreedySegments::Run run,
                const CostModel& cost) {
  double total = 0;
  for (size_t k = run.from; k < run.to; ++k) total += cost.per_sample(samples[k].length);
  return total;
}

uint64_t scanned_longest(const std::vector<Sample>& samples, GreedySegments::Run run) {
  uint64_t longest = 0;
  for (size_t k = run.from; k < run.to; ++k) longest = std::max(longest, samples[k].length);
  return longest;
}

std::vector<Sample> long_tailed(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> length(5.0, 1.5);
  std::vector<Sample> samples(n);
  for (Sample& s : samples) s.length = 1 + static_cast<uint64_t>(std::min(length(rng), 1e6));
  return samples;
}

TEST(EndRuns, EveryRunFromAnEndMatchesItsScanBitForBit) {
  const std::vector<Sample> samples = long_tailed(5000, 7);
  for (const CostModel cost :
       {CostModel{CostKind::kLinear}, CostModel{CostKind::kQuadratic, 2048}}) {
    const EndRuns ends(samples, cost);
    for (size_t split = 0; split <= samples.size(); ++split) {
      for (const GreedySegments::Run run :
           {GreedySegments::Run{0, split}, GreedySegments::Run{split, samples.size()}}) {
        ASSERT_TRUE(ends.total(run).has_value());
        // Exact equality: a last bit off would move the bisection that starts from it.
        ASSERT_EQ(*ends.total(run), added_up(samples, run, cost)) << run.from << ".." << run.to;
        ASSERT_EQ(ends.longest(run), scanned_longest(samples, run)) << run.from << ".." << run.to;
      }
    }
  }
}

TEST(EndRuns, CostsThatRoundAreLeftToBeAddedUp) {
  const std::vector<Sample> samples = long_tailed(100, 3);
  // A fractional a makes fractional costs, whose sums round in the order they are made.
  EXPECT_FALSE(EndRuns(samples, CostModel{CostKind::kQuadratic, 1.5}).total({0, 50}).has_value());
  // Whole costs whose sum reaches 2^53 round too.
  const std::vector<Sample> huge(4, Sample{uint64_t{1} << 26});  // each (2^26)^2 = 2^52
  EXPECT_FALSE(EndRuns(huge, CostModel{CostKind::kQuadratic, 0}).total({0, 2}).has_value());
  EXPECT_TRUE(EndRuns(huge, CostModel{CostKind::kLinear}).total({0, 2}).has_value());
}

}  // namespace
}  // namespace evenfeed
