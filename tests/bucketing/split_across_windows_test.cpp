// split_across_windows: a held window's step and a step of the next window split in
// cost order where that levels them, level steps left alone, and on random lumpy
// windows every sample kept once, every step as wide, and the worst step no less level.
#include "bucketing/split_across_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

// One sample per batch, its id the length (linear cost: a batch costs its length).
StepBatches step_of(std::initializer_list<uint64_t> lengths) {
  StepBatches step;
  for (uint64_t l : lengths) step.push_back(RankBatch{.samples = {l}});
  return step;
}

std::vector<uint64_t> samples_of(const StepBatches& step) {
  std::vector<uint64_t> out;
  for (const RankBatch& b : step) out.insert(out.end(), b.samples.begin(), b.samples.end());
  return out;
}

const CostModel kLinear{};
uint64_t length_is_id(uint64_t id) {
  return id;
}

// One step held from the last window and one of the next: {100, 30, 31, 32} (2.083)
// and {80, 81, 82, 25} (1.221) become {100, 80, 81, 82} (1.166) and {25, 30, 31, 32}
// (1.085), the dearer half staying with the held step, which has the dearest batch.
TEST(SplitAcrossWindows, SplitsAHeldStepWithTheNextWindowsStep) {
  std::vector<StepBatches> held = {step_of({100, 30, 31, 32})};
  std::vector<StepBatches> fresh = {step_of({80, 81, 82, 25})};
  EXPECT_EQ(split_across_windows(held, fresh, kLinear, length_is_id), 1u);
  ASSERT_EQ(held.size(), 1u);
  ASSERT_EQ(fresh.size(), 1u);
  std::vector<uint64_t> dear = samples_of(held[0]), cheap = samples_of(fresh[0]);
  std::sort(dear.begin(), dear.end());
  std::sort(cheap.begin(), cheap.end());
  EXPECT_EQ(dear, (std::vector<uint64_t>{80, 81, 82, 100}));
  EXPECT_EQ(cheap, (std::vector<uint64_t>{25, 30, 31, 32}));
}

// Every step within level_enough: nothing moves, even where a split would level more.
TEST(SplitAcrossWindows, LeavesLevelWindowsAsTheyAre) {
  std::vector<StepBatches> held = {step_of({100, 99, 98, 97})};
  std::vector<StepBatches> fresh = {step_of({99, 98, 97, 96})};
  const auto held_before = held, fresh_before = fresh;
  EXPECT_EQ(split_across_windows(held, fresh, kLinear, length_is_id), 0u);
  EXPECT_EQ(samples_of(held[0]), samples_of(held_before[0]));
  EXPECT_EQ(samples_of(fresh[0]), samples_of(fresh_before[0]));
  std::vector<StepBatches> none;
  EXPECT_EQ(split_across_windows(none, fresh, kLinear, length_is_id), 0u);
}

// Random lumpy windows of batches of one to three samples (lengths 1-1,000, each id
// once; quadratic cost): every sample still in exactly one batch, every batch whole,
// each window as many steps as before and each step as wide, and the worst step over
// both windows no less level.
TEST(SplitAcrossWindows, KeepsEverySampleAndNeverLeavesTheWorstStepLessLevel) {
  testing::Lcg uniform{4099};
  const CostModel quadratic{.kind = CostKind::kQuadratic, .a = 64};
  std::vector<uint64_t> lengths;
  auto length_of = [&](uint64_t id) { return lengths[id]; };
  auto worst = [&](const std::vector<StepBatches>& a, const std::vector<StepBatches>& b) {
    double w = 1;
    for (const auto* window : {&a, &b}) {
      for (const StepBatches& step : *window) {
        double dearest = 0, sum = 0;
        for (const RankBatch& batch : step) {
          uint64_t longest = 0;
          for (uint64_t id : batch.samples) longest = std::max(longest, lengths[id]);
          const double c =
              batch.samples.empty() ? 0 : quadratic.batch(batch.samples.size(), longest);
          dearest = std::max(dearest, c);
          sum += c;
        }
        w = std::max(w, step_imbalance(dearest, sum, step.size()));
      }
    }
    return w;
  };
  auto batches_of = [](const std::vector<StepBatches>& a, const std::vector<StepBatches>& b) {
    std::vector<std::vector<uint64_t>> out;
    for (const auto* window : {&a, &b})
      for (const StepBatches& step : *window)
        for (const RankBatch& batch : step) out.push_back(batch.samples);
    std::sort(out.begin(), out.end());
    return out;
  };
  size_t split_somewhere = 0;
  for (int round = 0; round < 300; ++round) {
    const auto width = static_cast<size_t>(2 + uniform() * 10);
    lengths.clear();
    std::vector<StepBatches> windows[2];
    for (auto& window : windows) {
      const auto steps = static_cast<size_t>(1 + uniform() * 5);
      for (size_t s = 0; s < steps; ++s) {
        StepBatches& step = window.emplace_back(width);
        for (RankBatch& batch : step) {
          const double u = uniform();
          const uint64_t longest = u < 0.15 ? 600 + static_cast<uint64_t>(400 * uniform())
                                            : 10 + static_cast<uint64_t>(300 * uniform());
          const auto count = static_cast<size_t>(1 + uniform() * 3);
          for (size_t k = 0; k < count; ++k) {
            batch.samples.push_back(lengths.size());
            lengths.push_back(k == 0 ? longest : 1 + static_cast<uint64_t>(uniform() * longest));
          }
        }
      }
    }
    const auto batches_before = batches_of(windows[0], windows[1]);
    const size_t held_steps = windows[0].size(), fresh_steps = windows[1].size();
    const double worst_before = worst(windows[0], windows[1]);
    split_somewhere += split_across_windows(windows[0], windows[1], quadratic, length_of) > 0;
    SCOPED_TRACE(::testing::Message() << "round " << round);
    ASSERT_EQ(windows[0].size(), held_steps);
    ASSERT_EQ(windows[1].size(), fresh_steps);
    for (const auto& window : windows)
      for (const StepBatches& step : window) ASSERT_EQ(step.size(), width);
    EXPECT_EQ(batches_of(windows[0], windows[1]), batches_before);
    EXPECT_LE(worst(windows[0], windows[1]), worst_before + 1e-12);
  }
  EXPECT_GT(split_somewhere, 50u);  // not vacuous
}

}  // namespace
}  // namespace evenfeed
