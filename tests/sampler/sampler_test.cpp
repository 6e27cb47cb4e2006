// Global orders are permutations that depend only on (seed, epoch); the plain
// distributed sampler serves every sample exactly once per epoch with equal step counts
// and honest padding, and resumes exactly — at the same or another world size.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/philox.h"
#include "sampler/distributed_sampler.h"
#include "sampler/global_order.h"
#include "sampler/keyed_permutation.h"

namespace evenfeed {
namespace {

TEST(KeyedPermutation, IsABijectionExhaustivelyForSmallSizes) {
  for (uint64_t n : {1, 2, 3, 5, 7, 64, 100, 1000, 4097, 65537}) {
    for (uint64_t key : {0ull, 1ull, 0xdeadbeefull}) {
      KeyedPermutation p(n, key);
      std::vector<uint8_t> hit(n, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t v = p(i);
        ASSERT_LT(v, n);
        ASSERT_EQ(hit[v], 0) << "n=" << n << " value " << v << " twice";
        hit[v] = 1;
        ASSERT_EQ(p.inverse(v), i);
      }
    }
  }
}

TEST(KeyedPermutation, InvertsAtTwoToTheFortyAndBeyond) {
  for (uint64_t n : {uint64_t{1} << 40, (uint64_t{1} << 40) + 12345, uint64_t{1} << 50}) {
    KeyedPermutation p(n, 42);
    CounterRng rng(1, RngStream::kOrder, 0, n);
    std::set<uint64_t> values;
    for (int k = 0; k < 20000; ++k) {
      const uint64_t i = rng.below(n);
      const uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_EQ(p.inverse(v), i);
      values.insert(v);
    }
    EXPECT_GT(values.size(), 19990u);  // distinct inputs map to distinct outputs
  }
}

TEST(KeyedPermutation, KeysGiveDifferentOrders) {
  KeyedPermutation a(1000, 1), b(1000, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += a(i) == b(i);
  EXPECT_LT(same, 20);
}

std::vector<uint64_t> materialize(const GlobalOrder& order) {
  std::vector<uint64_t> out(order.size());
  for (uint64_t p = 0; p < order.size(); ++p) out[p] = order.at(p);
  return out;
}

TEST(GlobalOrder, EveryKindIsAPermutationFixedBySeedAndEpoch) {
  const uint64_t n = 1003;
  OrderOptions blocks;
  blocks.kind = OrderKind::kShardBlocks;
  blocks.shard_sizes = {100, 1, 400, 2, 500};
  blocks.shards_per_window = 2;
  std::vector<OrderOptions> kinds(3);
  kinds[0].kind = OrderKind::kFullShuffle;
  kinds[1].kind = OrderKind::kKeyed;
  kinds[2] = blocks;
  for (const OrderOptions& o : kinds) {
    auto first = materialize(*make_global_order(o, n, 7, 0));
    auto again = materialize(*make_global_order(o, n, 7, 0));
    auto next_epoch = materialize(*make_global_order(o, n, 7, 1));
    auto other_seed = materialize(*make_global_order(o, n, 8, 0));
    EXPECT_EQ(first, again);
    EXPECT_NE(first, next_epoch);
    EXPECT_NE(first, other_seed);
    auto sorted = first;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint64_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0);
    EXPECT_EQ(sorted, ids) << order_kind_name(o.kind);
  }
}

TEST(GlobalOrder, ShardBlocksKeepReadsInsideAWindowOfShards) {
  OrderOptions o;
  o.kind = OrderKind::kShardBlocks;
  o.shard_sizes = std::vector<uint64_t>(8, 100);
  o.shards_per_window = 2;
  auto order = materialize(*make_global_order(o, 800, 3, 0));
  for (size_t w = 0; w < 4; ++w) {
    std::set<uint64_t> shards;
    for (size_t p = w * 200; p < (w + 1) * 200; ++p) shards.insert(order[p] / 100);
    EXPECT_EQ(shards.size(), 2u) << "window " << w;
  }
}

// Serves the rest of the epoch, checking every step's shape; returns the real samples.
std::vector<uint64_t> serve(DistributedSampler& sampler, uint32_t world, uint64_t batch,
                            uint64_t* steps = nullptr, uint64_t limit = UINT64_MAX) {
  std::vector<uint64_t> seen;
  PlanStep step;
  uint64_t served = 0;
  while (served < limit && sampler.next(step)) {
    ++served;
    EXPECT_EQ(step.ranks.size(), world);
    for (const RankBatch& b : step.ranks) {
      EXPECT_EQ(b.samples.size(), batch);  // every rank, every step: a full batch
      for (size_t k = 0; k < b.samples.size(); ++k) {
        if (b.slot_valid(k)) seen.push_back(b.samples[k]);
      }
    }
  }
  if (steps != nullptr) *steps = served;
  return seen;
}

TEST(DistributedSampler, ServesEverySampleExactlyOnceWithPaddingMasked) {
  for (uint64_t n : {1, 2, 3, 7, 13, 97, 100, 1009}) {
    for (uint32_t world : {1u, 2u, 3u, 8u}) {
      for (uint64_t batch : {1, 4, 5}) {
        SamplerOptions o;
        o.batch_size = batch;
        DistributedSampler sampler(n, world, o, {5, 0, {}});
        uint64_t steps = 0;
        auto seen = serve(sampler, world, batch, &steps);
        std::sort(seen.begin(), seen.end());
        std::vector<uint64_t> all(n);
        std::iota(all.begin(), all.end(), 0);
        ASSERT_EQ(seen, all) << "n=" << n << " world=" << world << " batch=" << batch;
        EXPECT_EQ(steps, (n + world * batch - 1) / (world * batch));
      }
    }
  }
}

TEST(DistributedSampler, DropLastDropsOnlyThePartialGlobalBatch) {
  SamplerOptions o;
  o.batch_size = 4;
  o.drop_last = true;
  DistributedSampler sampler(103, 3, o, {1, 0, {}});
  auto seen = serve(sampler, 3, 4);
  EXPECT_EQ(seen.size(), 96u);  // 8 whole global batches of 12
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), 96u);
}

TEST(DistributedSampler, ResumeContinuesExactlyAtTheSameWorldSize) {
  SamplerOptions o;
  o.batch_size = 3;
  DistributedSampler whole(500, 4, o, {9, 2, {}});
  auto all = serve(whole, 4, 3);
  DistributedSampler first(500, 4, o, {9, 2, {}});
  auto before = serve(first, 4, 3, nullptr, 10);
  PlanState state{9, 2, {}};
  state.advance(4, 10);
  state = PlanState::from_json(state.to_json());  // as stored in a checkpoint
  DistributedSampler second(500, 4, o, state);
  auto after = serve(second, 4, 3);
  before.insert(before.end(), after.begin(), after.end());
  EXPECT_EQ(before, all);
}

TEST(DistributedSampler, ResumeAtOtherWorldSizesLosesAndRepeatsNothing) {
  SamplerOptions o;
  o.batch_size = 5;
  const uint64_t n = 997;
  PlanState state{4, 1, {}};
  std::vector<uint64_t> seen;
  for (auto [world, steps] : {std::pair<uint32_t, uint64_t>{8, 7}, {3, 11}, {5, 2}}) {
    DistributedSampler s(n, world, o, state);
    auto part = serve(s, world, 5, nullptr, steps);
    seen.insert(seen.end(), part.begin(), part.end());
    state.advance(world, steps);
  }
  DistributedSampler last(n, 2, o, state);
  auto rest = serve(last, 2, 5);
  seen.insert(seen.end(), rest.begin(), rest.end());
  std::sort(seen.begin(), seen.end());
  std::vector<uint64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);
}

TEST(DistributedSampler, RefusesBadArgumentsAndForeignStates) {
  SamplerOptions o;
  EXPECT_THROW(DistributedSampler(10, 0, o, {}), Error);
  EXPECT_THROW(DistributedSampler(0, 2, o, {}), Error);
  o.batch_size = 0;
  EXPECT_THROW(DistributedSampler(10, 2, o, {}), Error);
  o.batch_size = 2;
  PlanState too_far{0, 0, {{2, 4}}};  // 10 samples / 4 per step = 3 steps
  EXPECT_THROW(DistributedSampler(10, 2, o, too_far), Error);
  EXPECT_THROW(PlanState::from_json("{\"seed\":1}"), Error);
}

}  // namespace
}  // namespace evenfeed
