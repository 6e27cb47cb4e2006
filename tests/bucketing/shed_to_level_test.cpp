// shed_to_level: a step whose max/mean is set by a few dear batches hands them to
// steps that are longer anyway, which the swaps of swap_to_level cannot do; and on
// random steps no step ever gets longer or less level, and nothing is lost.
#include "bucketing/shed_to_level.h"

#include <gtest/gtest.h>

#include <vector>

#include "bucketing/lump_runs.h"
#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

using testing::dearest;
using testing::max_over_mean;
using testing::Steps;
using testing::steps_in_order;

// At eight ranks, a step of two batches at 0.55 beside six at 0.45 (1.158), and two
// steps of seven batches at the budget beside one at 0.5. The swaps can only lift the
// first step's light batches with the 0.5s; given away, its two dearest leave it at 0.5
// and its partners as long as before.
TEST(ShedToLevel, HandsTheDearestBatchesToLongerSteps) {
  std::vector<double> costs = {0.55, 0.55, 0.45, 0.45, 0.45, 0.45, 0.45, 0.45};
  for (int step = 0; step < 2; ++step) {
    costs.insert(costs.end(), 7, 1.0);
    costs.push_back(0.5);
  }
  Steps swapped = steps_in_order(costs.size(), 8);
  swap_to_level(costs, swapped, 32);
  EXPECT_GT(max_over_mean(costs, swapped[0]), 1.12);
  EXPECT_DOUBLE_EQ(dearest(costs, swapped[0]), 0.55);

  Steps steps = steps_in_order(costs.size(), 8);
  EXPECT_EQ(shed_to_level(costs, steps), 1u);
  EXPECT_DOUBLE_EQ(dearest(costs, steps[0]), 0.5);
  EXPECT_NEAR(max_over_mean(costs, steps[0]), 0.5 * 8 / 3.7, 1e-12);
  for (size_t s = 1; s < 3; ++s) {
    EXPECT_DOUBLE_EQ(dearest(costs, steps[s]), 1.0);
    EXPECT_NEAR(max_over_mean(costs, steps[s]), 8 / 7.55, 1e-12);
  }
}

// Steps cut from the cost order (each a run of it) are as short as the batches allow:
// no step has a dearer partner with a cheaper batch, and nothing moves.
TEST(ShedToLevel, LeavesRunsOfTheCostOrderAlone) {
  const std::vector<double> costs = {1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
  Steps steps = steps_in_order(costs.size(), 2);
  EXPECT_EQ(shed_to_level(costs, steps), 0u);
  EXPECT_EQ(steps, steps_in_order(costs.size(), 2));
}

// A step within level_enough is not looked at; the dearer step here has no partner
// as dear as its dearest batch.
TEST(ShedToLevel, LeavesStepsThatAreLevelEnough) {
  const std::vector<double> costs = {0.55, 0.4, 1.0, 0.5};  // 1.158 and 1.333
  Steps steps = steps_in_order(costs.size(), 2);
  EXPECT_EQ(shed_to_level(costs, steps, {.level_enough = 1.2}), 0u);
  EXPECT_EQ(shed_to_level(costs, steps), 1u);
  EXPECT_EQ(steps, (Steps{{3, 1}, {2, 0}}));
}

// Random lumpy steps (a few dear batches among cheap ones, with ties): every batch is
// still in exactly one step, every step as wide as before, no step's dearest batch or
// max/mean higher than before, and each shed made the steps shorter in all.
TEST(ShedToLevel, NoStepGetsLongerOrLessLevel) {
  testing::Lcg uniform{2026};
  size_t shed_somewhere = 0;
  for (int round = 0; round < 400; ++round) {
    const auto [W, step_count, costs] = testing::lumpy_costs(uniform);
    Steps steps = testing::shuffled_steps(costs.size(), W, uniform);
    const Steps before = steps;
    const size_t sheds = shed_to_level(costs, steps, {.max_block = 4});
    shed_somewhere += sheds > 0;
    ASSERT_TRUE(testing::holds_each_batch_once(steps, W, costs.size())) << "round " << round;
    double time_before = 0, time_after = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      EXPECT_LE(dearest(costs, steps[s]), dearest(costs, before[s])) << "round " << round;
      EXPECT_LE(max_over_mean(costs, steps[s]), max_over_mean(costs, before[s]) + 1e-12)
          << "round " << round << " step " << s;
      time_before += dearest(costs, before[s]);
      time_after += dearest(costs, steps[s]);
    }
    if (sheds > 0) {
      EXPECT_LT(time_after, time_before) << "round " << round;
    }
  }
  // The property is not vacuous: many of these plans had something to shed.
  EXPECT_GT(shed_somewhere, 100u);
}

}  // namespace
}  // namespace evenfeed
