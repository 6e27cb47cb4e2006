// split_in_cost_order: two steps whose cost ranges overlap split again in cost order,
// the W dearest batches in one and the W cheapest in the other, where that levels them;
// not where the cheaper half would be spread wider than either step was; and on random
// steps no split lengthens the plan, leaves its worst step less level or loses a batch.
#include "bucketing/split_in_cost_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bucketing/shed_to_level.h"
#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

using testing::dearest;
using testing::max_over_mean;
using testing::Steps;
using testing::steps_in_order;

// At four ranks: {1.0, 0.3, 0.3, 0.3} (2.105) and {0.8, 0.8, 0.8, 0.7} (1.032). In cost
// order, {1.0, 0.8, 0.8, 0.8} (1.176) and {0.7, 0.3, 0.3, 0.3} (1.75): the worse of the
// two far more level, and the pair shorter (1.7 against 1.8). The shed cannot: the first
// step has no dearer step to give its 1.0 to, and the second, at 1.032, would come out
// less level by giving its 0.8s away.
TEST(SplitInCostOrder, SplitsTwoOverlappingStepsInCostOrder) {
  const std::vector<double> costs = {1.0, 0.3, 0.3, 0.3, 0.8, 0.8, 0.8, 0.7};
  Steps shed = steps_in_order(costs.size(), 4);
  EXPECT_EQ(shed_to_level(costs, shed), 0u);

  Steps steps = steps_in_order(costs.size(), 4);
  EXPECT_EQ(split_in_cost_order(costs, steps), 1u);
  EXPECT_EQ(steps, (Steps{{0, 4, 5, 6}, {7, 1, 2, 3}}));
  EXPECT_NEAR(max_over_mean(costs, steps[0]), 4 / 3.4, 1e-12);
  EXPECT_NEAR(max_over_mean(costs, steps[1]), 0.7 * 4 / 1.6, 1e-12);
}

// {1.0, 0.98, 0.98, 0.5} (1.156) and {0.99, 0.99, 0.99, 0.05} (1.311): in cost order the
// cheaper step, {0.98, 0.98, 0.5, 0.05}, would be at 1.562, less level than either. Left.
TEST(SplitInCostOrder, LeavesPairsWhoseCheaperHalfWouldBeLessLevel) {
  const std::vector<double> costs = {1.0, 0.98, 0.98, 0.5, 0.99, 0.99, 0.99, 0.05};
  Steps steps = steps_in_order(costs.size(), 4);
  EXPECT_EQ(split_in_cost_order(costs, steps), 0u);
  EXPECT_EQ(steps, steps_in_order(costs.size(), 4));
}

// Steps of different widths (a step with idle ranks) are not split with each other.
TEST(SplitInCostOrder, LeavesStepsOfDifferentWidths) {
  const std::vector<double> costs = {1.0, 0.5, 0.5, 0.5, 0.9, 0.9, 0.4};
  Steps steps = {{0, 1, 2, 3}, {4, 5, 6}};
  const Steps before = steps;
  EXPECT_EQ(split_in_cost_order(costs, steps), 0u);
  EXPECT_EQ(steps, before);
}

double time_of(const std::vector<double>& costs, const Steps& steps) {
  double t = 0;
  for (const auto& step : steps) t += dearest(costs, step);
  return t;
}

double worst_of(const std::vector<double>& costs, const Steps& steps) {
  double w = 0;
  for (const auto& step : steps) w = std::max(w, max_over_mean(costs, step));
  return w;
}

double excess_of(const std::vector<double>& costs, const Steps& steps) {
  double e = 0;
  for (const auto& step : steps) e += max_over_mean(costs, step) - 1;
  return e;
}

// Random lumpy steps, dealt at random: every batch still in exactly one step, every step
// as wide as before, the plan no longer (the sum of each step's dearest), its worst step
// no less level, and where anything was split, the steps more level in all.
TEST(SplitInCostOrder, NeverLengthensThePlanOrItsWorstStep) {
  testing::Lcg uniform{2027};
  size_t split_somewhere = 0;
  for (int round = 0; round < 400; ++round) {
    const auto [W, step_count, costs] = testing::lumpy_costs(uniform);
    Steps steps = testing::shuffled_steps(costs.size(), W, uniform);
    const Steps before = steps;
    const size_t splits = split_in_cost_order(costs, steps);
    split_somewhere += splits > 0;
    ASSERT_TRUE(testing::holds_each_batch_once(steps, W, costs.size())) << "round " << round;
    EXPECT_LE(time_of(costs, steps), time_of(costs, before) + 1e-12) << "round " << round;
    EXPECT_LE(worst_of(costs, steps), worst_of(costs, before) + 1e-12) << "round " << round;
    if (splits > 0) {
      EXPECT_LT(excess_of(costs, steps), excess_of(costs, before)) << "round " << round;
    }
  }
  // The property is not vacuous: many of these plans had pairs to split.
  EXPECT_GT(split_somewhere, 100u);
}

// The splits found by cost are the plain pass's, pair for pair: on random plans of up to
// 200 steps, some dealt at random (wide ranges) and some cut in cost order with a few
// batches exchanged (narrow ranges, as a window's steps are), the same steps after.
TEST(SplitInCostOrder, SplitsTheSamePairsAsAskingEveryPair) {
  testing::Lcg uniform{4404};
  size_t split_somewhere = 0;
  for (int round = 0; round < 200; ++round) {
    const auto W = static_cast<size_t>(2 + uniform() * 7);
    const auto step_count = static_cast<size_t>(2 + uniform() * 199);
    std::vector<double> costs(W * step_count);
    for (double& c : costs) c = uniform() < 0.2 ? 0.25 : 0.01 + uniform();
    Steps steps;
    if (round % 2 == 0) {
      steps = testing::shuffled_steps(costs.size(), W, uniform);
    } else {
      std::sort(costs.begin(), costs.end());
      steps = steps_in_order(costs.size(), W);
      for (size_t swap = 0; swap < step_count / 4; ++swap) {
        const auto x = static_cast<size_t>(uniform() * static_cast<double>(step_count));
        const auto y = static_cast<size_t>(uniform() * static_cast<double>(step_count));
        std::swap(steps[x][0], steps[y][W - 1]);
      }
    }
    Steps plain = steps;
    const size_t splits = split_in_cost_order(costs, steps);
    ASSERT_EQ(splits, split_in_cost_order_over_all_pairs(costs, plain)) << "round " << round;
    ASSERT_EQ(steps, plain) << "round " << round;
    split_somewhere += splits > 0;
  }
  EXPECT_GT(split_somewhere, 100u);
}

}  // namespace
}  // namespace evenfeed
