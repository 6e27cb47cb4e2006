#include "bucketing/lump_census.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace evenfeed {
namespace {

BucketingOptions bounded_quadratic() {
  BucketingOptions o;
  o.tokens_per_rank = 4096;
  o.max_batch_tokens = 4096;
  o.cost.kind = CostKind::kQuadratic;
  return o;
}

TEST(LumpCensus, CountsOnlySamplesDearerThanAnyPairUnderTheBound) {
  const BucketingOptions o = bounded_quadratic();
  // A pair of 2,048-token samples costs 2 (2048 x 2048 + 2048^2); one sample of L
  // tokens costs more from L = 3,199 on.
  const double pair = 2 * o.cost.per_sample(2048);
  ASSERT_LE(o.cost.per_sample(3198), pair);
  ASSERT_GT(o.cost.per_sample(3199), pair);
  const std::vector<uint64_t> lengths = {100, 2048, 2049, 3198, 3199, 3200, 4096, 5000};
  const LumpCensus census = take_lump_census(SpanLengths(lengths), o);
  EXPECT_EQ(census.shortest, 3199u);
  ASSERT_EQ(census.counts.size(), 4096u - 3199u + 1);
  EXPECT_EQ(census.counts[0], 1u);
  EXPECT_EQ(census.counts[1], 1u);
  EXPECT_EQ(census.counts[4096 - 3199], 2u);  // 5,000 is cut to the budget
  uint64_t total = 0;
  for (uint64_t c : census.counts) total += c;
  EXPECT_EQ(total, 4u);
  double cost = 0;
  for (uint64_t l : lengths) cost += o.cost.per_sample(l < 4096 ? l : 4096);
  EXPECT_DOUBLE_EQ(census.total_cost, cost);
}

TEST(LumpCensus, NoneWithoutABoundOrUnderTheLinearModel) {
  const std::vector<uint64_t> lengths = {100, 3500, 4096};
  BucketingOptions unbounded = bounded_quadratic();
  unbounded.max_batch_tokens = 0;
  EXPECT_LT(unmatched_lump_level(unbounded), 0);
  EXPECT_TRUE(take_lump_census(SpanLengths(lengths), unbounded).counts.empty());
  BucketingOptions linear = bounded_quadratic();
  linear.cost.kind = CostKind::kLinear;  // a pair of half the bound costs the budget
  EXPECT_LT(unmatched_lump_level(linear), 0);
  EXPECT_TRUE(take_lump_census(SpanLengths(lengths), linear).counts.empty());
}

// Twelve lumps at the budget and `sparse` ones below it, among `short_count` samples of
// 100 tokens.
std::vector<uint64_t> plateau_and_sparse(size_t short_count,
                                         std::vector<uint64_t> sparse = {3300, 3500, 3700, 3900}) {
  std::vector<uint64_t> lengths(short_count, 100);
  lengths.insert(lengths.end(), 12, 4096);
  lengths.insert(lengths.end(), sparse.begin(), sparse.end());
  return lengths;
}

LumpSpread spread_of(const std::vector<uint64_t>& lengths, size_t world_size) {
  const BucketingOptions o = bounded_quadratic();
  return plan_lump_spread(take_lump_census(SpanLengths(lengths), o), o.cost, world_size);
}

TEST(LumpSpread, ChosenWhereRunsLeaveAStepOfSparseLumpsOutOfLevel) {
  const CostModel cost = bounded_quadratic().cost;
  auto c = [&](uint64_t length) { return cost.per_sample(length); };
  std::vector<uint64_t> lengths = plateau_and_sparse(10000);
  // Runs of four: three steps at the budget, then the four sparse lumps.
  const double sparse = c(3300) + c(3500) + c(3700) + c(3900);
  ASSERT_GT(4 * c(3900) / sparse, kSpreadAbove);
  const LumpSpread spread = spread_of(lengths, 4);
  // Dealt evenly over the four whole steps, each stands below the budget by a quarter
  // of the sparse lumps' shortfall; a group may go kSpreadMargin beyond that.
  const double shortfall = 4 * c(4096) - sparse;
  EXPECT_NEAR(spread.most_ratio, (1 + kSpreadMargin) * 16 * c(4096) / (16 * c(4096) - shortfall),
              1e-12);
  EXPECT_GT(spread.most_ratio, 1.0);
  EXPECT_EQ(spread.reserve_cost, 0);
  // A seventeenth lump, the cheapest, does not fill a step: it is kept for the end.
  lengths.push_back(3250);
  const LumpSpread with_one_more = spread_of(lengths, 4);
  EXPECT_NEAR(with_one_more.most_ratio, spread.most_ratio, 1e-12);
  EXPECT_DOUBLE_EQ(with_one_more.reserve_cost, c(3250));
}

TEST(LumpSpread, NotChosenWhereRunsAreLevelOrTheSpreadCostsTooMuchTime) {
  EXPECT_GT(spread_of(plateau_and_sparse(10000), 4).most_ratio, 0);
  // Sparse lumps near the budget: runs of four are level.
  EXPECT_EQ(spread_of(plateau_and_sparse(10000, {4000, 4030, 4060, 4090}), 4).most_ratio, 0);
  // Few short samples: whole steps each as long as a lump at the budget would take more
  // than kSpreadTimeShare of the epoch longer than the runs (1.3%).
  EXPECT_EQ(spread_of(plateau_and_sparse(1000), 4).most_ratio, 0);
  // Fewer lumps than ranks make no whole step.
  EXPECT_EQ(spread_of(plateau_and_sparse(10000), 64).most_ratio, 0);
}

}  // namespace
}  // namespace evenfeed
