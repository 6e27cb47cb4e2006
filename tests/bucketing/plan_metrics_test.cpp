// The plan figures, checked against values worked out by hand on tiny plans.
#include "bucketing/plan_metrics.h"

#include <gtest/gtest.h>

#include "bucketing/baselines.h"

namespace evenfeed {
namespace {

PlanStep step_of(std::vector<std::vector<uint64_t>> batches) {
  PlanStep s;
  s.world_size = static_cast<uint32_t>(batches.size());
  for (auto& b : batches) s.ranks.push_back({b, {}});
  return s;
}

TEST(PlanMetrics, PaddingImbalanceAndCoverageByHand) {
  std::vector<uint64_t> lengths = {10, 5, 10, 10, 4};
  SpanLengths source(lengths);
  PlanMetrics m(source, 0);  // quadratic a = 0: cost L^2
  m.begin_epoch();
  m.add(step_of({{0, 1}, {2}}));  // linear costs 20 and 10 -> max/mean 20/15
  m.add(step_of({{3}, {3}}));     // sample 3 twice; 4 never
  m.end_epoch();
  // Real tokens 10+5+10+10+10 = 45 over slots 20+10+10+10 = 50.
  EXPECT_NEAR(m.padding_waste(), 0.1, 1e-12);
  EXPECT_EQ(m.largest_batch_tokens(), 20u);  // {0, 1}: two slots of 10
  EXPECT_NEAR(m.imbalance(CostKind::kLinear).max, 20.0 / 15.0, 1e-12);
  EXPECT_NEAR(m.imbalance(CostKind::kQuadratic).max, 200.0 / 150.0, 1e-12);
  EXPECT_EQ(m.total_dropped(), 1u);
  EXPECT_EQ(m.total_duplicated(), 1u);
}

TEST(PlanMetrics, UsefulShareCountsEachStepAtItsDearestBatch) {
  std::vector<uint64_t> lengths = {4, 2, 1, 3};
  SpanLengths source(lengths);
  PlanMetrics m(source, 0);  // quadratic a = 0: cost L^2
  m.begin_epoch();
  m.add(step_of({{0}, {1, 2}}));  // linear 4 and 2x2: lasts 4; quadratic 16 and 2x4: 16
  m.add(step_of({{3}, {}}));      // lasts 3 (9); the second rank waits
  m.end_epoch();
  // Linear: own cost 4+2+1+3 = 10 over 2 x (4 + 3) = 14 rank-time.
  EXPECT_NEAR(m.useful_share(CostKind::kLinear), 10.0 / 14.0, 1e-12);
  // Quadratic: 16+4+1+9 = 30 over 2 x (16 + 9) = 50.
  EXPECT_NEAR(m.useful_share(CostKind::kQuadratic), 30.0 / 50.0, 1e-12);
  EXPECT_NEAR(m.imbalance(CostKind::kLinear).max, 3.0 / 1.5, 1e-12);
  // Padding the waiting rank's batch levels the step (max/mean 1) but does not shorten
  // it: the useful share stays.
  PlanMetrics padded(source, 0);
  padded.begin_epoch();
  padded.add(step_of({{0}, {1, 2}}));
  PlanStep s = step_of({{3}, {3}});
  s.ranks[1].valid = {0};  // a padding slot
  padded.add(s);
  padded.end_epoch();
  EXPECT_NEAR(padded.imbalance(CostKind::kLinear).max, 1.0, 1e-12);
  EXPECT_NEAR(padded.useful_share(CostKind::kLinear), 10.0 / 14.0, 1e-12);
}

TEST(PlanMetrics, RepeatedPairsCountPairsThatMeetAgain) {
  std::vector<uint64_t> lengths(6, 1);
  SpanLengths source(lengths);
  PlanMetrics m(source, 0);
  m.begin_epoch();
  m.add(step_of({{0, 1, 2}, {3, 4, 5}}));  // 6 pairs
  m.end_epoch();
  m.begin_epoch();
  m.add(step_of({{0, 1, 3}, {2, 4, 5}}));  // (0,1) and (4,5) meet again
  m.end_epoch();
  EXPECT_NEAR(m.repeated_pair_share(), 2.0 / 6.0, 1e-12);
}

TEST(PlanMetrics, PaddingSlotsAreNotCounted) {
  std::vector<uint64_t> lengths = {4, 4};
  SpanLengths source(lengths);
  PlanMetrics m(source, 0);
  m.begin_epoch();
  PlanStep s = step_of({{0, 1}, {1, 0}});
  s.ranks[1].valid = {0, 0};  // both slots padding
  m.add(s);
  m.end_epoch();
  EXPECT_EQ(m.total_duplicated(), 0u);
  EXPECT_NEAR(m.padding_waste(), 0.5, 1e-12);
}

TEST(Baselines, TorchStylePadsWithDuplicatesAndSortedBudgetDropsTheLongest) {
  std::vector<uint64_t> lengths = {3, 50, 7, 8, 9};
  SpanLengths source(lengths);
  PlanMetrics torch(source, 0), sorted(source, 0);
  torch.begin_epoch();
  TorchStylePlanner t(5, 2, 2, 0, 0);
  PlanStep step;
  while (t.next(step)) torch.add(step);
  torch.end_epoch();
  EXPECT_EQ(torch.total_duplicated(), 1u);  // 5 samples padded to 6 slots
  sorted.begin_epoch();
  SortedBudgetPlanner b(source, 20, 2, 0, 0);
  while (b.next(step)) sorted.add(step);
  sorted.end_epoch();
  EXPECT_EQ(sorted.total_dropped(), 1u);  // the 50-token sample exceeds 20
}

}  // namespace
}  // namespace evenfeed
