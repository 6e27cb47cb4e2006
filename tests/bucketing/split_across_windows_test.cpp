// split_across_windows: a held window's step and a step of the next window split in
// cost order where that levels them, level steps left alone, and on random lumpy
// windows every batch kept whole with its cost, every step as wide, the plan no longer
// and its worst step no less level.
#include "bucketing/split_across_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "bucketing/cost_model.h"
#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

// One sample per batch, whose id is its batch's cost.
CostedStep step_of(std::initializer_list<uint64_t> costs) {
  CostedStep step;
  for (uint64_t c : costs) {
    step.ranks.push_back(RankBatch{.samples = {c}});
    step.costs.push_back(static_cast<double>(c));
  }
  return step;
}

std::vector<uint64_t> sorted_samples(const CostedStep& step) {
  std::vector<uint64_t> out;
  for (const RankBatch& b : step.ranks) out.insert(out.end(), b.samples.begin(), b.samples.end());
  std::sort(out.begin(), out.end());
  return out;
}

// One step held from the last window and one of the next: {100, 30, 31, 32} (2.083)
// and {80, 81, 82, 25} (1.221) become {100, 80, 81, 82} (1.166) and {25, 30, 31, 32}
// (1.085), the dearer half staying with the held step, which has the dearest batch.
TEST(SplitAcrossWindows, SplitsAHeldStepWithTheNextWindowsStep) {
  std::vector<CostedStep> held = {step_of({100, 30, 31, 32})};
  std::vector<CostedStep> fresh = {step_of({80, 81, 82, 25})};
  EXPECT_EQ(split_across_windows(held, fresh), 1u);
  ASSERT_EQ(held.size(), 1u);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(sorted_samples(held[0]), (std::vector<uint64_t>{80, 81, 82, 100}));
  EXPECT_EQ(sorted_samples(fresh[0]), (std::vector<uint64_t>{25, 30, 31, 32}));
}

// Every step within level_enough: nothing moves, even where a split would level more.
TEST(SplitAcrossWindows, LeavesLevelWindowsAsTheyAre) {
  std::vector<CostedStep> held = {step_of({100, 99, 98, 97})};
  std::vector<CostedStep> fresh = {step_of({99, 98, 97, 96})};
  EXPECT_EQ(split_across_windows(held, fresh), 0u);
  EXPECT_EQ(held[0].costs, (std::vector<double>{100, 99, 98, 97}));
  EXPECT_EQ(fresh[0].costs, (std::vector<double>{99, 98, 97, 96}));
  std::vector<CostedStep> none;
  EXPECT_EQ(split_across_windows(none, fresh), 0u);
}

using Batches = std::vector<std::pair<std::vector<uint64_t>, double>>;  // samples, cost

Batches batches_of(const std::vector<CostedStep>& a, const std::vector<CostedStep>& b) {
  Batches out;
  for (const auto* window : {&a, &b}) {
    for (const CostedStep& step : *window) {
      for (size_t r = 0; r < step.ranks.size(); ++r)
        out.emplace_back(step.ranks[r].samples, step.costs[r]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The time of both windows: the sum of each step's dearest batch.
double time_of(const std::vector<CostedStep>& a, const std::vector<CostedStep>& b) {
  double time = 0;
  for (const auto* window : {&a, &b}) {
    for (const CostedStep& step : *window)
      time += *std::max_element(step.costs.begin(), step.costs.end());
  }
  return time;
}

double worst_of(const std::vector<CostedStep>& a, const std::vector<CostedStep>& b) {
  double worst = 1;
  for (const auto* window : {&a, &b}) {
    for (const CostedStep& step : *window) {
      const double dearest = *std::max_element(step.costs.begin(), step.costs.end());
      double sum = 0;
      for (double c : step.costs) sum += c;
      worst = std::max(worst, step_imbalance(dearest, sum, step.costs.size()));
    }
  }
  return worst;
}

// Two windows of 1-5 steps of random lumpy costs (random_steps.h), each batch one to
// three samples (each id once): every batch still whole, with its cost, each window as
// many steps as before and each step as wide, the two windows no longer, and the worst
// step no less level.
TEST(SplitAcrossWindows, KeepsEveryBatchAndNeverLengthensOrUnlevels) {
  testing::Lcg uniform{4099};
  size_t split_somewhere = 0;
  for (int round = 0; round < 300; ++round) {
    const auto width = static_cast<size_t>(2 + uniform() * 10);
    uint64_t next_id = 0;
    std::vector<CostedStep> windows[2];
    for (auto& window : windows) {
      const auto steps = static_cast<size_t>(1 + uniform() * 5);
      for (size_t s = 0; s < steps; ++s) {
        CostedStep& step = window.emplace_back();
        for (size_t r = 0; r < width; ++r) {
          const double u = uniform();
          step.costs.push_back(u < 0.15  ? 0.6 + 0.4 * uniform()
                               : u < 0.3 ? 0.25
                                         : 0.01 + 0.3 * uniform());
          RankBatch& batch = step.ranks.emplace_back();
          for (auto k = static_cast<size_t>(1 + uniform() * 3); k > 0; --k)
            batch.samples.push_back(next_id++);
        }
      }
    }
    const Batches before = batches_of(windows[0], windows[1]);
    const size_t held_steps = windows[0].size(), fresh_steps = windows[1].size();
    const double worst_before = worst_of(windows[0], windows[1]);
    const double time_before = time_of(windows[0], windows[1]);
    split_somewhere += split_across_windows(windows[0], windows[1]) > 0;
    SCOPED_TRACE(::testing::Message() << "round " << round);
    ASSERT_EQ(windows[0].size(), held_steps);
    ASSERT_EQ(windows[1].size(), fresh_steps);
    for (const auto& window : windows) {
      for (const CostedStep& step : window) {
        ASSERT_EQ(step.ranks.size(), width);
        ASSERT_EQ(step.costs.size(), width);
      }
    }
    EXPECT_EQ(batches_of(windows[0], windows[1]), before);
    EXPECT_LE(worst_of(windows[0], windows[1]), worst_before + 1e-12);
    EXPECT_LE(time_of(windows[0], windows[1]), time_before + 1e-12);
  }
  EXPECT_GT(split_somewhere, 50u);  // not vacuous
}

}  // namespace
}  // namespace evenfeed
