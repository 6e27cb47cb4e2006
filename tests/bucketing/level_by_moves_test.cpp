// level_by_moves: a step whose dearest batches are fine samples cut too dear is trimmed
// and the samples given to idle room elsewhere; nothing is lost or served twice, no step
// gets longer or less level, the padding room and the batch limits hold, and a trim that
// cannot be placed leaves the steps exactly as they were.
#include "bucketing/level_by_moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "tests/bucketing/step_corpus.h"

namespace evenfeed {
namespace {

using namespace step_test;  // NOLINT(google-build-using-namespace)

bool any_batch(uint64_t, uint64_t) {
  return true;
}

// The changelog shape from level_by_moves.h, at 8 ranks and 8,192 tokens: step 0 holds
// four batches of 26 x 600 words (0.49 of the budget each) beside coarse samples alone
// at 0.45 and two at 0.33: max/mean 1.116. Cut to 24 x 600 (0.45), the fine batches
// would leave it at 1.076. Steps 1-8 are documents at the budget and one partner of
// five 2,800-word samples at 0.81 (max/mean 1.025, level enough), with room below
// their dearest for one 600 each (padded to 2,800: 0.16).
Corpus changelog_shape() {
  Corpus c;
  for (int k = 0; k < 4; ++k) c.batch(0, 26, 600);
  for (int k = 0; k < 2; ++k) c.batch(0, 1, 5200);
  for (int k = 0; k < 2; ++k) c.batch(0, 1, 4350);
  for (size_t s = 1; s <= 8; ++s) {
    for (int k = 0; k < 7; ++k) c.batch(s, 1, 8192);
    c.batch(s, 5, 2800);
  }
  return c;
}

TEST(LevelByMoves, TrimsFineBatchesIntoIdleRoom) {
  Corpus c = changelog_shape();
  const Steps before = c.steps;
  ASSERT_GT(ratio(c.lengths, c.steps[0]), 1.11);  // the premise
  const double spent = level_by_moves(c.lengths, c.steps, kQuadratic, any_batch,
                                      {.level_enough = 1.04, .padding_room = 1e6});
  EXPECT_LT(ratio(c.lengths, c.steps[0]), 1.08);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(c.steps[0][k].size(), 24u);
  // Each partner took one 600 (padded to 2,800); no document batch took any.
  for (size_t s = 1; s <= 8; ++s) {
    EXPECT_EQ(c.steps[s][7].size(), 6u);
    EXPECT_EQ(dearest(c.lengths, c.steps[s]), dearest(c.lengths, before[s]));
    EXPECT_LT(ratio(c.lengths, c.steps[s]), ratio(c.lengths, before[s]));
  }
  EXPECT_DOUBLE_EQ(spent, slots(c.lengths, c.steps) - slots(c.lengths, before));
  EXPECT_DOUBLE_EQ(spent, 8 * 2200.0);
}

// A step of documents whose other batches are light (10 x 1,000 words, 0.36 of the
// budget) cannot be trimmed: its dearest batches are samples alone. Its light batches
// could take 1,000-word samples from the level steps of 25 x 1,000 batches beside it
// (until plan revision 21 they did), which would lower its max/mean but shorten no
// step: no donor batch is its step's dearest alone. So nothing moves.
TEST(LevelByMoves, LeavesAStepThatOnlyFillingWouldLevel) {
  Corpus c;
  for (int k = 0; k < 4; ++k) c.batch(0, 1, 8192);
  for (int k = 0; k < 4; ++k) c.batch(0, 10, 1000);
  for (size_t s = 1; s <= 4; ++s)
    for (int k = 0; k < 8; ++k) c.batch(s, 25, 1000);
  const Steps before = c.steps;
  ASSERT_GT(ratio(c.lengths, c.steps[0]), 1.4);  // the premise
  const double spent = level_by_moves(c.lengths, c.steps, kQuadratic, any_batch,
                                      {.level_enough = 1.04, .padding_room = 1e9});
  EXPECT_EQ(spent, 0.0);
  EXPECT_EQ(c.steps, before);
}

TEST(LevelByMoves, KeepsWithinThePaddingRoom) {
  Corpus c = changelog_shape();
  const Steps before = c.steps;
  // Each 600-word sample padded to 2,800 spends 2,200 slots, and each trim of 0.005
  // takes at least four (one from each fine batch): room for three moves is too little.
  const double spent = level_by_moves(c.lengths, c.steps, kQuadratic, any_batch,
                                      {.level_enough = 1.04, .padding_room = 3 * 2200});
  EXPECT_EQ(spent, 0.0);
  EXPECT_EQ(c.steps, before);
}

TEST(LevelByMoves, KeepsTheBatchLimits) {
  Corpus c = changelog_shape();
  const Steps before = c.steps;
  // A cap of five samples a batch: the partners are full, so the trimmed samples have
  // nowhere to go and the steps are left exactly as they were.
  auto capped = [](uint64_t count, uint64_t) { return count <= 5; };
  level_by_moves(c.lengths, c.steps, kQuadratic, capped, {.padding_room = 1e9});
  EXPECT_EQ(c.steps, before);
}

TEST(LevelByMoves, LeavesLumpsAlone) {
  Corpus c;
  c.batch(0, 1, 8192);  // a lump at the max: no trim can lower it
  for (int k = 0; k < 7; ++k) c.batch(0, 1, 4000);
  for (int k = 0; k < 8; ++k) c.batch(1, 1, 8192);
  const Steps before = c.steps;
  level_by_moves(c.lengths, c.steps, kQuadratic, any_batch, {.padding_room = 1e9});
  EXPECT_EQ(c.steps, before);
}

// Random windows of mixed batches: every sample still served once, no step longer, every
// step that gave samples away shorter, the worst step no less level, every step that was
// level enough still so and the others no less level, the room kept, and the slots
// spent as reported.
TEST(LevelByMoves, RandomWindowsKeepEverySampleAndLevel) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    UniformDraws uniform(seed, 50);
    Corpus c;
    const size_t steps = uniform(2, 6), ranks = uniform(2, 8);
    for (size_t s = 0; s < steps; ++s) {
      for (size_t r = 0; r < ranks; ++r) {
        const uint64_t length = uniform(50, 6000);
        const double fit = kQuadratic.budget(8192) / kQuadratic.per_sample(length);
        const uint64_t least = uniform(0, 1);  // some ranks idle
        c.batch(s, uniform(least, std::clamp<uint64_t>(static_cast<uint64_t>(fit), 1, 24)), length);
      }
    }
    const Steps before = c.steps;
    const double room = static_cast<double>(uniform(0, 20000));
    auto cap = [](uint64_t count, uint64_t longest) {
      return count <= 24 && kQuadratic.batch(count, longest) <= kQuadratic.budget(8192);
    };
    const double spent = level_by_moves(c.lengths, c.steps, kQuadratic, cap,
                                        {.level_enough = 1.02, .padding_room = room});
    SCOPED_TRACE(seed);
    EXPECT_LE(spent, room);
    EXPECT_NEAR(spent, slots(c.lengths, c.steps) - slots(c.lengths, before), 1e-6);
    std::map<size_t, int> served;
    for (size_t s = 0; s < steps; ++s) {
      ASSERT_EQ(c.steps[s].size(), ranks);
      EXPECT_LE(dearest(c.lengths, c.steps[s]), dearest(c.lengths, before[s]) * (1 + 1e-12));
      EXPECT_LE(ratio(c.lengths, c.steps[s]), std::max(1.02, ratio(c.lengths, before[s])) + 1e-9);
      for (size_t r = 0; r < ranks; ++r) {
        for (size_t k : c.steps[s][r]) ++served[k];
        if (c.steps[s][r] != before[s][r]) {
          uint64_t longest = 0;
          for (size_t k : c.steps[s][r]) longest = std::max(longest, c.lengths[k]);
          EXPECT_TRUE(cap(c.steps[s][r].size(), longest));
        }
      }
    }
    // A step that gave samples away ran them in its dearest batches: it is now shorter.
    for (size_t s = 0; s < steps; ++s) {
      std::set<size_t> now;
      for (const auto& batch : c.steps[s]) now.insert(batch.begin(), batch.end());
      bool gave = false;
      for (const auto& batch : before[s]) {
        for (size_t k : batch) gave = gave || !now.contains(k);
      }
      if (gave) {
        EXPECT_LT(dearest(c.lengths, c.steps[s]), dearest(c.lengths, before[s]));
      }
    }
    double worst_before = 1, worst_after = 1;
    for (size_t s = 0; s < steps; ++s) {
      worst_before = std::max(worst_before, ratio(c.lengths, before[s]));
      worst_after = std::max(worst_after, ratio(c.lengths, c.steps[s]));
    }
    EXPECT_LE(worst_after, worst_before + 1e-9);
    ASSERT_EQ(served.size(), c.lengths.size());
    for (const auto& [k, times] : served) EXPECT_EQ(times, 1);
  }
}

}  // namespace
}  // namespace evenfeed
