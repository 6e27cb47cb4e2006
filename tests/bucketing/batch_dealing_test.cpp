#include "bucketing/batch_dealing.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(DealToPlaces, EmptyPoolAndBatchesWithoutPlaces) {
  CounterRng rng(1, RngStream::kBatchDeal, 0, 0);
  EXPECT_TRUE(deal_to_places({}, {5, 7}, {0, 0}, rng).empty());
  const std::vector<uint32_t> dealt = deal_to_places({3, 4}, {5, 7, 9}, {0, 2, 0}, rng);
  EXPECT_EQ(dealt, (std::vector<uint32_t>{1, 1}));
}

}  // namespace
}  // namespace evenfeed
