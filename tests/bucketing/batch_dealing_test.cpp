#include "bucketing/batch_dealing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace evenfeed {
namespace {

// Checks that `dealt` gives every batch exactly its places and no batch a sample
// longer than its longest.
void expect_valid_deal(const std::vector<uint32_t>& dealt, const std::vector<uint64_t>& pool,
                       const std::vector<uint64_t>& longest, const std::vector<uint64_t>& places) {
  ASSERT_EQ(dealt.size(), pool.size());
  std::vector<uint64_t> taken(longest.size(), 0);
  for (size_t k = 0; k < pool.size(); ++k) {
    ASSERT_LT(dealt[k], longest.size());
    EXPECT_LE(pool[k], longest[dealt[k]]) << "sample " << k;
    ++taken[dealt[k]];
  }
  EXPECT_EQ(taken, places);
}

// How many pairs of samples of one group (last epoch's batch) `dealt` puts in one batch.
int met_again(const std::vector<uint32_t>& group, const std::vector<uint32_t>& dealt) {
  int pairs = 0;
  for (size_t i = 0; i < dealt.size(); ++i) {
    for (size_t j = i + 1; j < dealt.size(); ++j)
      pairs += group[i] == group[j] && dealt[i] == dealt[j];
  }
  return pairs;
}

// Only batch 0 can hold the 10 and the 9: a deal that placed the short samples first,
// or drew among all places, would strand one of them.
TEST(DealToPlaces, LongSamplesGoWhereOnlyTheyFit) {
  const std::vector<uint64_t> pool = {1, 9, 1, 10}, longest = {10, 5, 5}, places = {2, 1, 1};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    CounterRng rng(seed, RngStream::kBatchDeal, 0, 0);
    const std::vector<uint32_t> dealt = deal_to_places(pool, longest, places, rng);
    expect_valid_deal(dealt, pool, longest, places);
    EXPECT_EQ(dealt[1], 0u);
    EXPECT_EQ(dealt[3], 0u);
  }
}

// Batches of runs of like lengths (as the noisy sort cuts them) dealt again: valid,
// the same for the same draws, and mates scattered: two samples of one run end up
// together about as often as two random samples would (48 of the 979 other places, 5%),
// not always, as without the deal.
TEST(DealToPlaces, RunsOfLikeLengthsAreScatteredAndTheDealIsReproducible) {
  std::vector<uint64_t> pool, longest, places;
  for (uint64_t b = 0; b < 20; ++b) {
    longest.push_back(1000 - b);  // every other sample fits everywhere
    places.push_back(49);
    for (uint64_t k = 0; k < 49; ++k) pool.push_back(900 - b - (k % 3));
  }
  double together = 0, pairs = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    CounterRng rng(seed, RngStream::kBatchDeal, 0, 0), again(seed, RngStream::kBatchDeal, 0, 0);
    const std::vector<uint32_t> dealt = deal_to_places(pool, longest, places, rng);
    expect_valid_deal(dealt, pool, longest, places);
    EXPECT_EQ(dealt, deal_to_places(pool, longest, places, again));
    for (uint64_t b = 0; b < 20; ++b) {  // pairs of run b (pool items 49b .. 49b+48)
      for (uint64_t i = 49 * b; i < 49 * b + 49; ++i) {
        for (uint64_t j = i + 1; j < 49 * b + 49; ++j) {
          together += dealt[i] == dealt[j];
          pairs += 1;
        }
      }
    }
  }
  EXPECT_GT(together / pairs, 0.02);
  EXPECT_LT(together / pairs, 0.10);
}

// Last epoch's batches ("groups") of 10 samples each, dealt to 40 batches of 10
// places: at random, about 60 pairs meet again per deal; steered, a sample takes a
// batch without its group whenever one of its draws finds one, and only the long
// samples, which fit 4 batches, meet again, as few as their places allow.
TEST(DealToPlaces, SteeredDealKeepsLastEpochsMatesApart) {
  std::vector<uint64_t> pool, longest, places;
  std::vector<uint32_t> group, kept_group;
  for (uint32_t b = 0; b < 40; ++b) {
    longest.push_back(b < 4 ? 1000 : 100);  // four batches of long samples
    places.push_back(10);
    kept_group.push_back(DealSteer::kNoGroup);
  }
  for (uint32_t k = 0; k < 400; ++k) {
    pool.push_back(k < 20 ? 500 + k : 50);  // 20 long samples, in groups 0 and 1
    group.push_back(k / 10);
  }
  int plain = 0, steered = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    CounterRng rng(seed, RngStream::kBatchDeal, 0, 0), again(seed, RngStream::kBatchDeal, 0, 0);
    const DealSteer steer{.pool_group = group, .batch_group = kept_group};
    const std::vector<uint32_t> dealt = deal_to_places(pool, longest, places, rng, &steer);
    expect_valid_deal(dealt, pool, longest, places);
    EXPECT_EQ(dealt, deal_to_places(pool, longest, places, again, &steer));
    steered += met_again(group, dealt);
    CounterRng plain_rng(seed, RngStream::kBatchDeal, 0, 0);
    plain += met_again(group, deal_to_places(pool, longest, places, plain_rng));
  }
  // Each group of 10 long samples shares the 4 long batches: 3 + 3 + 2 + 2 at best, 8
  // pairs, 16 per deal; the 38 groups of short samples can all be kept apart.
  EXPECT_GT(plain, 10 * 40);
  EXPECT_GE(steered, 10 * 16);
  EXPECT_LE(steered, 10 * (16 + 2));
}

// A batch's kept sample counts as met too: steered, no sample of its group joins it
// while another batch has room.
TEST(DealToPlaces, SteeredDealCountsTheKeptSample) {
  const std::vector<uint64_t> pool = {5, 5}, longest = {9, 9}, places = {1, 1};
  const std::vector<uint32_t> group = {7, DealSteer::kNoGroup}, kept = {7, 3};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    CounterRng rng(seed, RngStream::kBatchDeal, 0, 0);
    const DealSteer steer{.pool_group = group, .batch_group = kept};
    EXPECT_EQ(deal_to_places(pool, longest, places, rng, &steer)[0], 1u);
  }
}

// A ladder of batches as the noisy sort cuts them (each batch's samples within 60
// tokens of its longest, 10 tokens apart), whose previous epoch's batches were runs of
// 20 like lengths. Each sample fits only the few batches near its length, so mates meet
// again whatever the deal; the greedy steered deal places the last samples where room
// is left, beside mates, and the swaps after it take a share of those pairs apart
// (3,478-3,503 pairs without them, 3,314-3,323 with them, of 38,000).
TEST(DealToPlaces, SwapsAfterTheSteeredDealSeparateMatesItLeftTogether) {
  std::vector<uint64_t> pool, longest, places;
  std::vector<uint32_t> kept;
  CounterRng draw_length(7, RngStream::kBatchDeal, 9, 9);
  for (uint32_t b = 0; b < 200; ++b) {
    longest.push_back(10000 - 10 * b);
    places.push_back(19);
    kept.push_back(DealSteer::kNoGroup);
    for (int k = 0; k < 19; ++k) pool.push_back(longest.back() - draw_length.below(60));
  }
  std::vector<size_t> by_length(pool.size());
  std::iota(by_length.begin(), by_length.end(), size_t{0});
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](size_t a, size_t b) { return pool[a] > pool[b]; });
  std::vector<uint32_t> group(pool.size());
  for (size_t r = 0; r < by_length.size(); ++r) group[by_length[r]] = static_cast<uint32_t>(r / 20);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    int pairs[2] = {0, 0};
    for (bool swaps : {false, true}) {
      CounterRng rng(seed, RngStream::kBatchDeal, 0, 0);
      const DealSteer steer{.pool_group = group, .batch_group = kept, .swap_apart = swaps};
      const std::vector<uint32_t> dealt = deal_to_places(pool, longest, places, rng, &steer);
      expect_valid_deal(dealt, pool, longest, places);
      pairs[swaps] = met_again(group, dealt);
    }
    EXPECT_LT(pairs[1], 0.97 * pairs[0]) << "seed " << seed;
  }
}

TEST(DealToPlaces, EmptyPoolAndBatchesWithoutPlaces) {
  CounterRng rng(1, RngStream::kBatchDeal, 0, 0);
  EXPECT_TRUE(deal_to_places({}, {5, 7}, {0, 0}, rng).empty());
  const std::vector<uint32_t> dealt = deal_to_places({3, 4}, {5, 7, 9}, {0, 2, 0}, rng);
  EXPECT_EQ(dealt, (std::vector<uint32_t>{1, 1}));
}

}  // namespace
}  // namespace evenfeed
