// WindowPlanner::lift_light_batches (window_planner_lift.cpp), through the planner: the
// same epoch planned with and without it (BucketingOptions::lift_light_batches).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "bucketing/length_source.h"
#include "bucketing/plan_metrics.h"
#include "bucketing/token_budget_planner.h"
#include "tests/support/log_normal_lengths.h"

namespace evenfeed {
namespace {

using testing::log_normal_lengths;

// One epoch (seed 0) of `lengths` under the quadratic model, cut to `tokens`, with the
// light batches lifted or not.
PlanMetrics quadratic_epoch(const std::vector<uint64_t>& lengths, uint32_t world, uint64_t tokens,
                            bool lift) {
  const SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = tokens;
  o.cost.kind = CostKind::kQuadratic;
  o.oversize = OversizePolicy::kTruncate;
  o.lift_light_batches = lift;
  const TruncatedLengths planned(source, tokens);
  PlanMetrics metrics(planned, o.cost.a);
  metrics.begin_epoch();
  TokenBudgetPlanner planner(source, o, world, {0, 0, {}});
  PlanStep step;
  while (planner.next(step)) metrics.add(step);
  metrics.end_epoch();
  return metrics;
}

// Log-normal lengths (median 500, sigma 1), 5,000 of them: one window, whose worst
// step holds samples at the budget beside batches of a few long ones well under it.
// Lifted, those batches are cut again nearer the step's level from the other steps'
// samples, which are planned again: worst step 1.2301 -> 1.2136 (draw 2, 64 ranks,
// 32,768 tokens), 1.0301 -> 1.0222 (draw 3, 8 ranks, 16,384 tokens); the mean over
// steps lower too, the epoch no longer to run (its useful share no less) and no more
// padded.
TEST(LiftLightBatches, LiftedStepsAreMoreLevelAndTheEpochNoLonger) {
  struct Case {
    uint64_t draw;
    uint32_t world;
    uint64_t tokens;
  };
  for (const Case& c : {Case{2, 64, 32768}, Case{3, 8, 16384}}) {
    SCOPED_TRACE(::testing::Message() << "draw " << c.draw);
    const std::vector<uint64_t> lengths = log_normal_lengths(c.draw, 5000);
    const PlanMetrics plain = quadratic_epoch(lengths, c.world, c.tokens, false);
    const PlanMetrics lifted = quadratic_epoch(lengths, c.world, c.tokens, true);
    EXPECT_EQ(lifted.total_dropped(), 0u);
    EXPECT_EQ(lifted.total_duplicated(), 0u);
    EXPECT_LT(lifted.imbalance(CostKind::kQuadratic).max,
              plain.imbalance(CostKind::kQuadratic).max - 0.005);
    EXPECT_LT(lifted.imbalance(CostKind::kQuadratic).mean,
              plain.imbalance(CostKind::kQuadratic).mean);
    EXPECT_GE(lifted.useful_share(CostKind::kQuadratic), plain.useful_share(CostKind::kQuadratic));
    // No more padded than the padding guard (1.9%), or than without the lift.
    EXPECT_LE(lifted.padding_waste(), std::max(plain.padding_waste(), 0.019));
  }
}

}  // namespace
}  // namespace evenfeed
