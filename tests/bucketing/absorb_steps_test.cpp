// absorb_negligible_steps: a step of next to no work is dealt into another step of its
// window where that keeps the host level, no longer than a negligible step more, within
// the batch limits and the padding room; otherwise nothing changes. No sample is lost or
// served twice.
#include "bucketing/absorb_steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tests/bucketing/step_corpus.h"

namespace evenfeed {
namespace {

using namespace step_test;  // NOLINT(google-build-using-namespace)
const double kBudget = kQuadratic.budget(16384);

auto capped_at(uint64_t cap) {
  return [cap](uint64_t count, uint64_t longest) {
    return count <= cap && kQuadratic.batch(count, longest) <= kBudget;
  };
}

// Each sample of `c` appears exactly once in `steps`.
void expect_each_once(const Corpus& c) {
  std::map<size_t, int> served;
  for (const auto& step : c.steps)
    for (const auto& b : step)
      for (size_t k : b) ++served[k];
  EXPECT_EQ(served.size(), c.lengths.size());
  for (const auto& [k, times] : served) EXPECT_EQ(times, 1) << "sample " << k;
}

// The shape seen on C++ and Python sources (absorb_steps.h), at 8 ranks: step 0 holds
// 3-4 files of 12-16 words a batch (next to no work, max/mean above 1.06), step 1 a
// batch of 22 x 66 words and seven of 40 x 30 under a cap of 64 (max/mean 1.01), step 2
// documents at the budget.
Corpus sources_shape() {
  Corpus c;
  for (int r = 0; r < 8; ++r) c.batch(0, r < 4 ? 4 : 3, r % 2 ? 16 : 12);
  c.batch(1, 22, 66);
  for (int r = 1; r < 8; ++r) c.batch(1, 40, 30 + r);
  for (int r = 0; r < 8; ++r) c.batch(2, 1, 16384);
  return c;
}

TEST(AbsorbSteps, DealsANegligibleStepIntoALevelOne) {
  Corpus c = sources_shape();
  const Steps before = c.steps;
  ASSERT_LE(dearest(c.lengths, before[0]), 0.01 * kBudget);  // the premise
  ASSERT_GT(ratio(c.lengths, before[0]), 1.06);
  const size_t absorbed = absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(64),
                                                  {.budget = kBudget, .padding_room = 1e6});
  EXPECT_EQ(absorbed, 1u);
  ASSERT_EQ(c.steps.size(), 2u);
  expect_each_once(c);
  // The host is the step of short files, no less level than the negligible step was
  // and no longer than it was by more than one percent of the budget.
  EXPECT_EQ(c.steps[1], before[2]);
  EXPECT_LE(ratio(c.lengths, c.steps[0]), ratio(c.lengths, before[0]));
  EXPECT_LE(dearest(c.lengths, c.steps[0]), dearest(c.lengths, before[1]) + 0.01 * kBudget);
  for (const auto& b : c.steps[0]) EXPECT_LE(b.size(), 64u);
}

TEST(AbsorbSteps, LeavesTheStepWhenTheHostsBatchesAreFull) {
  Corpus c = sources_shape();
  const Steps before = c.steps;
  // Under a cap of 40 only the batch of 22 has room: 18 samples, fewer than the 28
  // the negligible step holds. The documents take none: each is at the budget.
  EXPECT_EQ(absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(40),
                                    {.budget = kBudget, .padding_room = 1e6}),
            0u);
  EXPECT_EQ(c.steps, before);
}

TEST(AbsorbSteps, KeepsWithinThePaddingRoom) {
  Corpus c = sources_shape();
  const Steps before = c.steps;
  // The 28 samples of 12-16 words padded to at least 31: more than 28 x 15 slots.
  EXPECT_EQ(absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(64),
                                    {.budget = kBudget, .padding_room = 28 * 15}),
            0u);
  EXPECT_EQ(c.steps, before);
}

TEST(AbsorbSteps, LeavesStepsOfWork) {
  Corpus c;
  // Step 0's dearest batch, ten 260-word samples, costs 2% of the budget: not
  // negligible, though its 17 samples would fit the host's batches of 300-word samples
  // within the bounds (two or three more each, under 1% of the budget).
  c.batch(0, 10, 260);
  for (int r = 1; r < 8; ++r) c.batch(0, 1, 260);
  for (int r = 0; r < 8; ++r) c.batch(1, 20, 300);
  const Steps before = c.steps;
  ASSERT_GT(dearest(c.lengths, before[0]), 0.019 * kBudget);  // the premises
  ASSERT_LT(3 * kQuadratic.per_sample(300), 0.01 * kBudget);
  EXPECT_EQ(absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(64),
                                    {.budget = kBudget, .padding_room = 1e6}),
            0u);
  EXPECT_EQ(c.steps, before);
  // Counted negligible at 2%, it is absorbed.
  EXPECT_EQ(
      absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(64),
                              {.budget = kBudget, .negligible_share = 0.02, .padding_room = 1e6}),
      1u);
}

TEST(AbsorbSteps, LeavesTheStepWhenTheHostWouldBeLessLevel) {
  Corpus c;
  // The negligible step is level: eight 16-word samples, one a rank. Its only host has
  // one batch of 64-word samples beside batches of 12-word ones, which cannot take a
  // 16-word sample without padding all they hold: all eight would go to the one batch
  // (18 x 64), and the host, already at 3.5, would end near 4.7.
  for (int r = 0; r < 8; ++r) c.batch(0, 1, 16);
  c.batch(1, 10, 64);
  for (int r = 1; r < 8; ++r) c.batch(1, 10, 12);
  const Steps before = c.steps;
  ASSERT_LT(ratio(c.lengths, before[0]), 1.001);  // the premises
  ASSERT_GT(ratio(c.lengths, before[1]), 3.4);
  ASSERT_LT(kQuadratic.batch(18, 64) - kQuadratic.batch(10, 64), 0.01 * kBudget);
  EXPECT_EQ(absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(64),
                                    {.budget = kBudget, .padding_room = 1e6}),
            0u);
  EXPECT_EQ(c.steps, before);
}

// Random windows: every sample still served once, the batch limits held, and where a
// step was absorbed, one fewer step, the padding room kept.
TEST(AbsorbSteps, RandomWindowsKeepEverySample) {
  size_t absorbed_in_all = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    UniformDraws uniform(seed, 51);
    Corpus c;
    const size_t steps = uniform(2, 6), ranks = uniform(2, 8);
    for (size_t s = 0; s < steps; ++s) {
      const bool tiny = uniform(0, 2) == 0;
      for (size_t r = 0; r < ranks; ++r)
        c.batch(s, uniform(tiny ? 1 : 8, tiny ? 6 : 48), uniform(tiny ? 4 : 20, tiny ? 24 : 200));
    }
    const Steps before = c.steps;
    const double room = static_cast<double>(uniform(0, 4000));
    const size_t absorbed = absorb_negligible_steps(c.lengths, c.steps, kQuadratic, capped_at(48),
                                                    {.budget = kBudget, .padding_room = room});
    SCOPED_TRACE(seed);
    absorbed_in_all += absorbed;
    EXPECT_EQ(c.steps.size() + absorbed, before.size());
    expect_each_once(c);
    for (const auto& step : c.steps) {
      EXPECT_EQ(step.size(), ranks);
      for (const auto& b : step) {
        uint64_t longest = 0;
        for (size_t k : b) longest = std::max(longest, c.lengths[k]);
        EXPECT_TRUE(b.empty() || capped_at(48)(b.size(), longest));
      }
    }
    const double slots_before = slots(c.lengths, before), slots_after = slots(c.lengths, c.steps);
    EXPECT_LE(slots_after, slots_before + room);
  }
  EXPECT_GT(absorbed_in_all, 20u);  // the property is not vacuous
}

}  // namespace
}  // namespace evenfeed
