// lend_to_light: a donor step's batches lend short samples to a light batch, within the
// light batch's ceiling (the step's dearest), the donor's level and the padding room.
#include "bucketing/lend_to_light.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace evenfeed {
namespace {

struct Sample {
  uint64_t length = 0;
  uint64_t id = 0;
};

struct TestBatch {
  std::vector<Sample> entries;
  uint64_t longest = 0;
  double cost = 0;
};

const CostModel kLinear{.kind = CostKind::kLinear};

TestBatch batch_of(const std::vector<uint64_t>& lengths, const CostModel& cost = kLinear) {
  static uint64_t next_id = 0;
  TestBatch b;
  for (uint64_t length : lengths) {
    b.entries.push_back({length, next_id++});
    b.longest = std::max(b.longest, length);
  }
  b.cost = cost.batch(b.entries.size(), b.longest);
  return b;
}

std::vector<uint64_t> repeat(uint64_t length, size_t times) {
  return std::vector<uint64_t>(times, length);
}

double donor_imbalance(const std::vector<TestBatch>& donor) {
  double sum = 0, most = 0;
  for (const TestBatch& b : donor) {
    sum += b.cost;
    most = std::max(most, b.cost);
  }
  return step_imbalance(most, sum, donor.size());
}

auto any_size = [](uint64_t, uint64_t) { return true; };

TEST(SampleToLend, KeepsOneSampleAtTheBatchsLongest) {
  TestBatch two_longest = batch_of({50, 30, 50});
  auto pick = sample_to_lend(two_longest, 100);
  ASSERT_NE(pick, two_longest.entries.end());
  EXPECT_EQ(pick->length, 50u);
  EXPECT_EQ(pick - two_longest.entries.begin(), 2) << "the first sample at the longest stays";

  TestBatch one_longest = batch_of({50, 30});
  pick = sample_to_lend(one_longest, 100);
  ASSERT_NE(pick, one_longest.entries.end());
  EXPECT_EQ(pick->length, 30u);

  TestBatch alone = batch_of({50});
  EXPECT_EQ(sample_to_lend(alone, 100), alone.entries.end());
}

TEST(SampleToLend, TakesTheLongestUnderTheCeiling) {
  TestBatch b = batch_of({60, 45, 30, 41});
  auto pick = sample_to_lend(b, 44);
  ASSERT_NE(pick, b.entries.end());
  EXPECT_EQ(pick->length, 41u);
  EXPECT_EQ(sample_to_lend(b, 29), b.entries.end()) << "nothing short enough";
}

TEST(LendToLight, FillsTheLightBatchUpToTheDearest) {
  // Eight batches of twenty 10-token samples (200 each); a light batch of one 20-token
  // sample (20) in a step whose dearest costs 200: it takes nine samples, 10 x 20, one
  // from each batch in turn. (At 1.02 the donor would stop it at three: 200 beside
  // three batches at 190 is 1.019, a fourth 1.026.)
  std::vector<TestBatch> donor(8, TestBatch{});
  for (TestBatch& b : donor) b = batch_of(repeat(10, 20));
  TestBatch light = batch_of({20});
  const LightFill fill =
      lend_to_light(donor, light, kLinear, any_size,
                    {.dearest = 200, .room = 1e9, .donor_level = 1.5, .world_size = 8});
  EXPECT_TRUE(fill.moved);
  EXPECT_TRUE(fill.stopped) << "an eleventh sample would cost 220 > 200";
  EXPECT_EQ(light.entries.size(), 10u);
  EXPECT_DOUBLE_EQ(light.cost, 200);
  EXPECT_DOUBLE_EQ(fill.spent, 9 * (20.0 - 10.0));
  size_t left = 0;
  for (const TestBatch& b : donor) {
    left += b.entries.size();
    EXPECT_DOUBLE_EQ(b.cost, kLinear.batch(b.entries.size(), b.longest));
  }
  EXPECT_EQ(left, 8u * 20 - 9);
  EXPECT_EQ(donor[0].entries.size(), 18u) << "the first batch gave twice";
  EXPECT_EQ(donor[7].entries.size(), 19u);
}

TEST(LendToLight, DonorStaysWithinItsLevel) {
  // Four batches at 1,000: one of ten 100-token samples, which cannot lend to a light
  // batch of 20-token ones, and three of a 100-token sample beside nine of 10 tokens.
  // Each sample lent lowers its batch by 100; at 1.10 three can go (max/mean 1.081),
  // a fourth would leave 1.111.
  std::vector<TestBatch> donor{batch_of(repeat(100, 10))};
  for (int k = 0; k < 3; ++k) {
    std::vector<uint64_t> lengths = repeat(10, 9);
    lengths.push_back(100);
    donor.push_back(batch_of(lengths));
  }
  const std::vector<TestBatch> before = donor;
  TestBatch light = batch_of({20});
  LightFill fill =
      lend_to_light(donor, light, kLinear, any_size,
                    {.dearest = 1000, .room = 1e9, .donor_level = 1.10, .world_size = 4});
  EXPECT_TRUE(fill.moved);
  EXPECT_FALSE(fill.stopped) << "the donor's level stopped it, not the light batch";
  EXPECT_EQ(light.entries.size(), 4u);
  EXPECT_EQ(donor[0].entries.size(), before[0].entries.size()) << "too long to lend";
  EXPECT_LE(donor_imbalance(donor), 1.10);

  // At 1.02 not even one: 1,000 beside 900 is 1.026.
  donor = before;
  light = batch_of({20});
  fill = lend_to_light(donor, light, kLinear, any_size,
                       {.dearest = 1000, .room = 1e9, .donor_level = 1.02, .world_size = 4});
  EXPECT_FALSE(fill.moved);
  EXPECT_EQ(light.entries.size(), 1u);
}

TEST(LendToLight, PaddingRoomAndBatchLimitStopIt) {
  // Each 10-token sample is padded to the light batch's 20: 10 slots each.
  std::vector<TestBatch> donor(8, TestBatch{});
  for (TestBatch& b : donor) b = batch_of(repeat(10, 20));
  TestBatch light = batch_of({20});
  LightFill fill = lend_to_light(donor, light, kLinear, any_size,
                                 {.dearest = 200, .room = 25, .donor_level = 1.5, .world_size = 8});
  EXPECT_TRUE(fill.stopped);
  EXPECT_DOUBLE_EQ(fill.spent, 20);
  EXPECT_EQ(light.entries.size(), 3u);

  for (TestBatch& b : donor) b = batch_of(repeat(10, 20));
  light = batch_of({20});
  auto at_most_four = [](uint64_t count, uint64_t) { return count <= 4; };
  fill = lend_to_light(donor, light, kLinear, at_most_four,
                       {.dearest = 200, .room = 1e9, .donor_level = 1.5, .world_size = 8});
  EXPECT_TRUE(fill.stopped);
  EXPECT_EQ(light.entries.size(), 4u);
}

// Random donors and light batches, both cost models: whatever moves, every sample is
// still somewhere, each batch's cost is its count times its longest's, the light batch
// stays at or under the dearest and holds nothing longer than its longest, each donor
// batch keeps a sample at its longest, the donor is no less level than the limit
// allows, and the padding spent is within the room.
TEST(LendToLight, RandomStepsKeepEveryLimit) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const CostModel cost{.kind = trial % 2 ? CostKind::kQuadratic : CostKind::kLinear};
    const size_t W = 2 + rng() % 9;
    std::vector<TestBatch> donor;
    for (size_t r = 0; r < W; ++r) {
      std::vector<uint64_t> lengths(1 + rng() % 30);
      for (uint64_t& l : lengths) l = 1 + rng() % 200;
      donor.push_back(batch_of(lengths, cost));
    }
    std::vector<uint64_t> light_lengths(1 + rng() % 3);
    for (uint64_t& l : light_lengths) l = 1 + rng() % 120;
    TestBatch light = batch_of(light_lengths, cost);
    double dearest = light.cost;
    for (const TestBatch& b : donor) dearest = std::max(dearest, b.cost);
    const double room = static_cast<double>(rng() % 400);
    const double level = 1 + static_cast<double>(rng() % 10) / 100;
    const double donor_before = donor_imbalance(donor);
    size_t samples_before = light.entries.size();
    uint64_t tokens_before = 0;
    for (const TestBatch& b : donor) {
      samples_before += b.entries.size();
      for (const Sample& s : b.entries) tokens_before += s.length;
    }
    for (const Sample& s : light.entries) tokens_before += s.length;
    const uint64_t light_longest = light.longest;

    const LightFill fill =
        lend_to_light(donor, light, cost, any_size,
                      {.dearest = dearest, .room = room, .donor_level = level, .world_size = W});

    size_t samples_after = light.entries.size();
    uint64_t tokens_after = 0;
    for (const TestBatch& b : donor) {
      samples_after += b.entries.size();
      for (const Sample& s : b.entries) tokens_after += s.length;
      EXPECT_DOUBLE_EQ(b.cost, cost.batch(b.entries.size(), b.longest));
      EXPECT_TRUE(std::any_of(b.entries.begin(), b.entries.end(),
                              [&](const Sample& s) { return s.length == b.longest; }));
    }
    for (const Sample& s : light.entries) {
      tokens_after += s.length;
      EXPECT_LE(s.length, light_longest);
    }
    EXPECT_EQ(samples_after, samples_before);
    EXPECT_EQ(tokens_after, tokens_before);
    EXPECT_EQ(light.longest, light_longest);
    EXPECT_LE(light.cost, dearest);
    EXPECT_DOUBLE_EQ(light.cost, cost.batch(light.entries.size(), light.longest));
    EXPECT_LE(donor_imbalance(donor), std::max(level, donor_before) + 1e-12);
    EXPECT_LE(fill.spent, room);
    EXPECT_EQ(fill.moved, light.entries.size() > light_lengths.size());
  }
}

}  // namespace
}  // namespace evenfeed
