// The token-budget planner: every sample exactly once, W batches per step, every batch
// within the budget, deterministic, resumable at any world size, and clear about
// samples it cannot plan.
#include "bucketing/token_budget_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "bucketing/imbalance_bound.h"
#include "bucketing/plan_metrics.h"
#include "bucketing/shed_to_level.h"
#include "bucketing/split_in_cost_order.h"
#include "core/error.h"
#include "core/philox.h"

namespace evenfeed {
namespace {

// Long-tailed lengths in [1, max_length], with a few 100x the median.
std::vector<uint64_t> long_tailed(uint64_t n, uint64_t seed, uint64_t max_length) {
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(seed, RngStream::kSynth, 7, i);
    double l = 40 * std::exp(0.9 * rng.normal());
    if (rng.uniform() < 0.01) l = 40.0 * 100;
    out[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, max_length);
  }
  return out;
}

// Log-normal lengths (median x e^(sigma N(0,1))) in [1, max_length], from the synthetic
// stream `stream` of `seed`.
std::vector<uint64_t> log_normal(uint64_t n, uint64_t seed, uint32_t stream, double median,
                                 double sigma, uint64_t max_length = 8192) {
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(seed, RngStream::kSynth, stream, i);
    const double l = median * std::exp(sigma * rng.normal());
    out[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, max_length);
  }
  return out;
}

// Like Debian's changelog entries: `n` of them, most a few dozen words (log-normal,
// median 39), 5% the same 18-word line, a share `long_share` long (300-8,192 tokens,
// log-uniform).
std::vector<uint64_t> changelog_like(uint64_t n, double long_share) {
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(3, RngStream::kSynth, 23, i);
    const double kind = rng.uniform();
    double l = 39 * std::exp(0.6 * rng.normal());
    if (kind < 0.05 + long_share)
      l = std::exp(std::log(300.0) + rng.uniform() * std::log(8192 / 300.0));
    if (kind < 0.05) l = 18;
    out[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, 8192);
  }
  return out;
}

BucketingOptions quadratic_budget(uint64_t tokens_per_rank) {
  BucketingOptions o;
  o.tokens_per_rank = tokens_per_rank;
  o.cost.kind = CostKind::kQuadratic;
  return o;
}

// Adds `epochs` whole epochs of a planner with these options to `metrics`.
void plan_epochs(PlanMetrics& metrics, const LengthSource& source, const BucketingOptions& o,
                 uint32_t world, uint64_t seed, uint32_t epochs = 2) {
  for (uint32_t epoch = 0; epoch < epochs; ++epoch) {
    metrics.begin_epoch();
    TokenBudgetPlanner planner(source, o, world, {seed, epoch, {}});
    PlanStep step;
    while (planner.next(step)) metrics.add(step);
    metrics.end_epoch();
  }
}

// Two epochs at `world` ranks with `seed`, each sample served once, and the imbalance
// under `cost` below `mean` and `max`; returns their metrics for further checks.
PlanMetrics expect_level(const LengthSource& source, const BucketingOptions& o, uint32_t world,
                         uint64_t seed, CostKind cost, double mean, double max) {
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, world, seed);
  EXPECT_LT(metrics.imbalance(cost).mean, mean);
  EXPECT_LT(metrics.imbalance(cost).max, max);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
  return metrics;
}

// One epoch (seed 1) at `world` ranks, every sample served exactly once.
PlanMetrics one_epoch(const LengthSource& source, const BucketingOptions& o, uint32_t world) {
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, world, 1, 1);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
  return metrics;
}

// Two epochs (seed 1) at 8 ranks, every sample served exactly once in each.
PlanMetrics two_epochs_at_8(const LengthSource& source, const BucketingOptions& options) {
  PlanMetrics metrics(source, options.cost.a);
  plan_epochs(metrics, source, options, 8, 1);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
  return metrics;
}

// Bounds on a plan's quadratic imbalance (worst step, mean over steps) and padding.
struct LevelBounds {
  double worst, mean, padding;
};

// Two epochs at 64 ranks with `seed`: every sample exactly once, within `bounds`
// (measured on the lengths as planned, cut to the budget: --oversize truncate).
void expect_level_at_64(const LengthSource& source, const BucketingOptions& o, uint64_t seed,
                        LevelBounds bounds) {
  const TruncatedLengths planned(source, o.tokens_per_rank);
  PlanMetrics metrics(planned, o.cost.a);
  plan_epochs(metrics, source, o, 64, seed);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, bounds.worst) << "seed " << seed;
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).mean, bounds.mean) << "seed " << seed;
  EXPECT_LT(metrics.padding_waste(), bounds.padding) << "seed " << seed;
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
}

struct Served {
  std::vector<uint64_t> samples;
  uint64_t steps = 0;
};

// Serves up to `limit` steps, checking each one's shape and budget.
Served serve(TokenBudgetPlanner& planner, const std::vector<uint64_t>& lengths,
             const BucketingOptions& o, uint32_t world, uint64_t limit = UINT64_MAX) {
  Served out;
  PlanStep step;
  while (out.steps < limit && planner.next(step)) {
    ++out.steps;
    EXPECT_EQ(step.world_size, world);
    EXPECT_EQ(step.ranks.size(), world);
    for (const RankBatch& b : step.ranks) {
      EXPECT_TRUE(b.valid.empty());
      uint64_t longest = 0;
      for (uint64_t id : b.samples)
        longest = std::max(longest, std::min(lengths[id], o.tokens_per_rank));
      EXPECT_LE(o.cost.batch(b.samples.size(), longest),
                o.cost.budget(o.tokens_per_rank) * (1 + 1e-12));
      if (o.max_batch_size > 0) {
        EXPECT_LE(b.samples.size(), o.max_batch_size);
      }
      if (o.max_batch_tokens > 0) {
        EXPECT_LE(b.samples.size() * longest, o.max_batch_tokens);
      }
      out.samples.insert(out.samples.end(), b.samples.begin(), b.samples.end());
    }
  }
  return out;
}

std::vector<std::vector<uint64_t>> all_batches(TokenBudgetPlanner&& planner) {
  std::vector<std::vector<uint64_t>> out;
  PlanStep step;
  while (planner.next(step)) {
    for (const RankBatch& b : step.ranks) out.push_back(b.samples);
  }
  return out;
}

void expect_exactly_once(std::vector<uint64_t> seen, uint64_t n) {
  std::sort(seen.begin(), seen.end());
  std::vector<uint64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  ASSERT_EQ(seen, all);
}

// Each step as its ranks' (count, longest), sorted; the steps sorted too: what every
// step costs, whatever its samples and its place in the epoch.
using Shape = std::vector<std::pair<size_t, uint64_t>>;
void add_shape(const PlanStep& step, const std::vector<uint64_t>& lengths,
               std::vector<Shape>& shapes) {
  Shape shape;
  for (const RankBatch& b : step.ranks) {
    uint64_t longest = 0;
    for (uint64_t id : b.samples) longest = std::max(longest, lengths[id]);
    shape.emplace_back(b.samples.size(), longest);
  }
  std::sort(shape.begin(), shape.end());
  shapes.push_back(shape);
}

TEST(TokenBudgetPlanner, EverySampleExactlyOnceForManyShapes) {
  for (uint64_t n : {1, 2, 3, 7, 13, 97, 1000, 4099}) {
    for (uint32_t world : {1u, 2u, 3u, 8u, 64u}) {
      for (uint64_t budget : {4000, 20000}) {
        for (int variant = 0; variant < 3; ++variant) {  // linear, quadratic, bounded
          const CostKind cost = variant == 0 ? CostKind::kLinear : CostKind::kQuadratic;
          const auto lengths = long_tailed(n, n * 31 + world, budget);
          SpanLengths source(lengths);
          BucketingOptions o;
          o.tokens_per_rank = budget;
          o.cost.kind = cost;
          if (variant == 2) o.max_batch_tokens = budget;
          o.window = 1500;  // several windows, so carries are exercised
          TokenBudgetPlanner planner(source, o, world, {11, 0, {}});
          Served s = serve(planner, lengths, o, world);
          SCOPED_TRACE(testing::Message() << "n=" << n << " world=" << world << " budget=" << budget
                                          << " variant=" << variant);
          expect_exactly_once(s.samples, n);
          EXPECT_GE(s.steps, 1u);
        }
      }
    }
  }
}

TEST(TokenBudgetPlanner, FewerSamplesThanRanksGiveOneStepWithEmptyBatches) {
  std::vector<uint64_t> lengths = {5, 9, 3};
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 100;
  TokenBudgetPlanner planner(source, o, 8, {0, 0, {}});
  PlanStep step;
  ASSERT_TRUE(planner.next(step));
  EXPECT_EQ(step.ranks.size(), 8u);
  EXPECT_EQ(std::count_if(step.ranks.begin(), step.ranks.end(),
                          [](const RankBatch& b) { return !b.samples.empty(); }),
            3);
  EXPECT_FALSE(planner.next(step));
}

TEST(TokenBudgetPlanner, MaxBatchSizeIsRespected) {
  const auto lengths = long_tailed(3000, 5, 4096);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 4096;
  o.max_batch_size = 7;
  TokenBudgetPlanner planner(source, o, 4, {1, 0, {}});
  expect_exactly_once(serve(planner, lengths, o, 4).samples, lengths.size());
}

// A cap of 2 under the quadratic model: no batch of short samples comes near half the
// budget, so the end of the window takes back its finest steps while the final cut's
// last step stays light, here most of the window's steps, shown light by a bound on the
// last samples in key order (LightTailBound) rather than by cutting the leftover after
// each. Every sample once, no batch over the cap.
TEST(TokenBudgetPlanner, ASmallCapTakesBackFineStepsAndServesEverySampleOnce) {
  const auto lengths = long_tailed(20000, 11, 4096);
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(4096);
  o.max_batch_size = 2;
  TokenBudgetPlanner planner(source, o, 8, {3, 0, {}});
  const Served served = serve(planner, lengths, o, 8);
  expect_exactly_once(served.samples, lengths.size());
  EXPECT_GE(served.steps, lengths.size() / 16);
}

// Under the quadratic model the budget bounds compute: a batch of short samples may hold
// many times the budget's tokens, which a GPU sized for it may not hold. The token bound
// keeps every batch's padded tokens within it, at any world size, with every sample
// once. The plan stays level and unpadded at few ranks although 1% of the samples are
// lumps (4,000 tokens, alone in a batch, costing more than any batch of shorter ones):
// the final cut used to leave the lumps that did not fill a step with light batches
// (p99 1.81 here); they are now spread with the dearest partners (plan_lump_runs).
TEST(TokenBudgetPlanner, TokenBoundKeepsQuadraticBatchesWithinMemory) {
  const auto lengths = long_tailed(20000, 8, 4096);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 4096;
  o.cost.kind = CostKind::kQuadratic;
  o.window = 6000;
  auto most_tokens = [&](const BucketingOptions& options) {
    uint64_t most = 0;
    for (const auto& b : all_batches(TokenBudgetPlanner(source, options, 8, {2, 0, {}}))) {
      uint64_t longest = 0;
      for (uint64_t id : b) longest = std::max(longest, lengths[id]);
      most = std::max<uint64_t>(most, b.size() * longest);
    }
    return most;
  };
  EXPECT_GT(most_tokens(o), 2 * o.tokens_per_rank);  // unbounded: short batches grow
  o.max_batch_tokens = o.tokens_per_rank;
  EXPECT_LE(most_tokens(o), o.max_batch_tokens);
  for (uint32_t world : {1u, 3u, 8u, 64u}) {
    TokenBudgetPlanner planner(source, o, world, {5, 1, {}});
    SCOPED_TRACE(testing::Message() << "world=" << world);
    expect_exactly_once(serve(planner, lengths, o, world).samples, lengths.size());
  }
  // One window (the automatic one), so the lumps are placed together.
  o.window = 0;
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 8, 3);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).mean, 1.03);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).p99, 1.10);
  EXPECT_LT(metrics.padding_waste(), 0.02);
}

// A sample cap on a corpus of mostly tiny samples (median 9, like paragraphs): below
// about 118 tokens (linear) or 477 (quadratic) a batch reaches the cap before the
// budget, so batch costs jump with integer lengths and the shortest samples cannot
// reach the levels of long ones. Before the planner cut capped samples to a level of
// their own and kept them out of long samples' steps, such plans reached max/mean 2.5-4
// (p99) on real paragraphs.
TEST(TokenBudgetPlanner, SampleCapKeepsStepsLevel) {
  const uint64_t n = 60000;
  std::vector<uint64_t> lengths(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(4, RngStream::kSynth, 12, i);
    double l = 9 * std::exp(1.3 * rng.normal());
    if (rng.uniform() < 0.01) l = 900 * (1 + rng.uniform());
    lengths[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, 8192);
  }
  SpanLengths source(lengths);
  for (CostKind cost : {CostKind::kLinear, CostKind::kQuadratic}) {
    for (uint32_t world : {8u, 64u}) {
      BucketingOptions o;
      o.tokens_per_rank = 8192;
      o.cost.kind = cost;
      o.max_batch_size = 64;
      PlanMetrics metrics(source, o.cost.a);
      plan_epochs(metrics, source, o, world, 3);
      SCOPED_TRACE(testing::Message() << cost_kind_name(cost) << " W=" << world);
      EXPECT_LT(metrics.imbalance(cost).mean, 1.03);
      EXPECT_LT(metrics.imbalance(cost).p99, 1.10);
      EXPECT_LT(metrics.padding_waste(), 0.02);
      EXPECT_EQ(metrics.total_dropped(), 0u);
      EXPECT_EQ(metrics.total_duplicated(), 0u);
    }
  }
}

// Source files (log-normal, median 330 words, sigma 1.6, like the Python sources of an
// SDK) at 8,192 tokens, linear cost, 64 ranks, capped at 64, in one window. The end
// made from coarse groups within 8% of their dearest batch left cheap steps of a few
// files of 300-500 words a batch beside batches of 64 short ones at the cap: at seed
// 7, worst step 1.089, p99 1.086, mean 1.0117 over two epochs. Planned again with
// groups within 5% (keep_more_level_tighter) and the more level end kept: 1.074, 1.029,
// 1.0102, and quicker (useful share 98.49% -> 98.57%). Fails without the second plan.
TEST(TokenBudgetPlanner, AnEndOutOfLevelIsPlannedAgainWithTighterGroups) {
  const std::vector<uint64_t> lengths = log_normal(17747, 7, 45, 330, 1.6, 8192);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 8192;
  o.max_batch_size = 64;
  o.repeated_pairs_target = 0;  // exactly 64
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 64, 1);
  EXPECT_LT(metrics.imbalance(CostKind::kLinear).max, 1.08);
  EXPECT_LT(metrics.imbalance(CostKind::kLinear).p99, 1.05);
  EXPECT_LT(metrics.imbalance(CostKind::kLinear).mean, 1.011);
  EXPECT_LT(metrics.padding_waste(), 0.02);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
}

// Capped samples whose grain coarsens within a step: 1,500 five-token samples and 200
// of 40-60 tokens, under a cap of 64 and quadratic cost. A step cut at the level of
// its first batch (sixty-four 5-token samples) gave batches of five or six longer
// samples up to a sixth below it: max/mean 1.12 and mean 1.022 over the epoch's 7
// steps. Cut at the level its coarsest batches fit (capped_level), max 1.04 and mean
// 1.008.
TEST(TokenBudgetPlanner, CappedStepsOfCoarseningGrainAreCutAtALevelTheyFit) {
  std::vector<uint64_t> lengths(1700, 5);
  for (uint64_t i = 1500; i < lengths.size(); ++i) {
    CounterRng rng(6, RngStream::kSynth, 14, i);
    lengths[i] = 40 + static_cast<uint64_t>(rng.uniform() * 21);
  }
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(16384);
  o.max_batch_size = 64;
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    expect_level(source, o, 4, seed, CostKind::kQuadratic, 1.015, 1.07);
  }
}

// A small corpus at 64 ranks (6,000 log-normal lengths, median 200, under a linear
// budget of 8,192): one window, whose coarse groups formed within the level tolerance
// need more fillers than it holds. The groups left incomplete, of mixed cost, went to
// the final cut: mean 1.06-1.07, worst step 1.11-1.14. Planned again with the groups
// chosen for the fillers (plan_coarse_runs) and the more level plan kept, mean
// 1.034-1.036 and worst 1.048-1.053.
TEST(TokenBudgetPlanner, CoarseGroupsAreChosenForTheFillersAWindowHolds) {
  const auto lengths = log_normal(6000, 4, 31, 200, 1.2);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 8192;
  o.oversize = OversizePolicy::kTruncate;
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const PlanMetrics metrics = expect_level(source, o, 64, seed, CostKind::kLinear, 1.045, 1.07);
    EXPECT_LT(metrics.padding_waste(), 0.02);
  }
}

// One 1,000-token document among 5,000 samples of 5-15 tokens, quadratic cost, budget
// 1,000, the automatic sample cap (64): the short samples cannot reach the document's
// cost, all go into capped steps, and the epoch's final cut left the document beside
// idle ranks (max/mean 2 at 2 ranks, 1.5 at 3). A step lends it its dearest batches
// now: at the cap each costs 0.65 of the budget, so the document's step is at W / (1 +
// (W - 1) 0.65), 1.21 and 1.30, the best any plan under the cap can do.
TEST(TokenBudgetPlanner, NoRankIdlesBesideADocumentTheCappedSamplesCannotReach) {
  std::vector<uint64_t> lengths{1000};
  for (uint64_t i = 0; i < 5000; ++i) {
    CounterRng rng(5, RngStream::kSynth, 43, i);
    lengths.push_back(5 + rng.below(11));
  }
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(1000);
  ASSERT_EQ(resolve_automatic(source, o).max_batch_size, 64u);
  for (uint32_t world : {2u, 3u}) {
    SCOPED_TRACE(testing::Message() << "W " << world);
    size_t steps = 0, idle = 0;
    for (uint32_t epoch = 0; epoch < 2; ++epoch) {
      TokenBudgetPlanner planner(source, o, world, {1, epoch, {}});
      PlanStep step;
      while (planner.next(step)) {
        ++steps;
        for (const RankBatch& b : step.ranks) idle += b.samples.empty();
      }
    }
    EXPECT_GT(steps, 0u);
    EXPECT_EQ(idle, 0u);
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, world, 1);
    const double at_cap = 64 * o.cost.per_sample(15) / o.cost.budget(1000);
    EXPECT_LE(metrics.imbalance(CostKind::kQuadratic).max,
              world / (1 + (world - 1) * at_cap) + 0.01);
    EXPECT_EQ(metrics.total_duplicated() + metrics.total_dropped(), 0u);
  }
}

// More samples at the whole budget than ranks (70 at 64 ranks, quadratic, 8,192 tokens)
// beside 3,000 short ones: no plan padding at most 2% has every step under 1.457
// (imbalance_bound.h: two steps hold the 70, and all the short samples' cost is what
// partners them). The short ones go into capped steps under the automatic cap, which a
// final cut did not take back: two lump steps at 1.57-1.59 beside two light steps of
// their own (one at 1.61). Their samples may now rejoin the window's end as partners
// (FinishWay::capped_rejoin): 1.461, two steps per epoch.
TEST(TokenBudgetPlanner, ManyFullBudgetSamplesComeWithinAPercentOfTheBound) {
  std::vector<uint64_t> lengths(70, 8192);
  for (uint64_t i = 0; i < 3000; ++i) {
    CounterRng rng(1, RngStream::kSynth, 47, i);
    lengths.push_back(10 + rng.below(391));
  }
  SpanLengths source(lengths);
  const BucketingOptions o = quadratic_budget(8192);
  ImbalanceBound bound({.world_size = 64, .tokens_per_rank = 8192, .cost = o.cost});
  for (uint64_t l : lengths) bound.add(l);
  ASSERT_GT(bound.worst_step(), 1.4);
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 64, 0);
  EXPECT_LT(metrics.padding_waste(), 0.02);
  EXPECT_GE(metrics.imbalance(CostKind::kQuadratic).max, bound.worst_step());
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, 1.01 * bound.worst_step());
}

TEST(TokenBudgetPlanner, SameSeedSamePlanNewEpochNewPlan) {
  const auto lengths = long_tailed(5000, 2, 8192);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 8192;
  auto a = all_batches(TokenBudgetPlanner(source, o, 4, {3, 0, {}}));
  auto b = all_batches(TokenBudgetPlanner(source, o, 4, {3, 0, {}}));
  auto c = all_batches(TokenBudgetPlanner(source, o, 4, {3, 1, {}}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Composition changes, not only order: few batches of epoch 0 recur in epoch 1.
  auto sorted_batches = [](std::vector<std::vector<uint64_t>> v) {
    for (auto& x : v) std::sort(x.begin(), x.end());
    std::sort(v.begin(), v.end());
    return v;
  };
  auto sa = sorted_batches(a), sc = sorted_batches(c);
  std::vector<std::vector<uint64_t>> common;
  std::set_intersection(sa.begin(), sa.end(), sc.begin(), sc.end(), std::back_inserter(common));
  size_t multi = 0;
  for (const auto& x : common) multi += x.size() > 1;
  EXPECT_LT(multi, sa.size() / 10);
}

TEST(TokenBudgetPlanner, ResumeAtTheSameWorldSizeEqualsAnUninterruptedRun) {
  const auto lengths = long_tailed(6000, 4, 8192);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 8192;
  o.window = 2000;
  TokenBudgetPlanner whole(source, o, 4, {6, 3, {}});
  Served all = serve(whole, lengths, o, 4);
  TokenBudgetPlanner first(source, o, 4, {6, 3, {}});
  Served before = serve(first, lengths, o, 4, all.steps / 3);
  PlanState state{6, 3, {}};
  state.advance(4, before.steps);
  TokenBudgetPlanner second(source, o, 4, PlanState::from_json(state.to_json()));
  Served after = serve(second, lengths, o, 4);
  before.samples.insert(before.samples.end(), after.samples.begin(), after.samples.end());
  EXPECT_EQ(before.samples, all.samples);
  EXPECT_EQ(before.steps + after.steps, all.steps);
}

TEST(TokenBudgetPlanner, ResumeAtOtherWorldSizesLosesAndRepeatsNothing) {
  // Plain, and quadratic with a token bound (lumps placed at the final cut).
  for (uint64_t n : {1, 50, 6007, 6008, 6009}) {
    const auto lengths = long_tailed(n, n, 8192);
    SpanLengths source(lengths);
    BucketingOptions o;
    o.tokens_per_rank = 8192;
    o.window = 1800;
    if (n > 6007) {  // the 1% of 4,000 tokens are lumps: alone, and dearer than pairs
      o.tokens_per_rank = 6000;
      o.cost.kind = CostKind::kQuadratic;
      o.max_batch_tokens = n == 6008 ? 6000 : 7000;
    }
    PlanState state{2, 0, {}};
    std::vector<uint64_t> seen;
    for (auto [world, steps] : {std::pair<uint32_t, uint64_t>{8, 3}, {3, 5}, {16, 1}}) {
      TokenBudgetPlanner p(source, o, world, state);
      Served part = serve(p, lengths, o, world, steps);
      seen.insert(seen.end(), part.samples.begin(), part.samples.end());
      state.advance(world, part.steps);
    }
    TokenBudgetPlanner last(source, o, 5, state);
    Served rest = serve(last, lengths, o, 5);
    seen.insert(seen.end(), rest.samples.begin(), rest.samples.end());
    SCOPED_TRACE(testing::Message() << "n=" << n);
    expect_exactly_once(seen, n);
  }
}

TEST(TokenBudgetPlanner, HeavyTailsStayBalancedAndUnpadded) {
  // Deterministic quality floor on a long-tailed corpus (the targets are measured by
  // `evenfeed plan` in BENCHMARKS.md; this guards against regressions).
  // A budget of 2048 tokens keeps batches small enough (about 50 samples at the median)
  // for 60k samples to reshuffle pairs at 2% padding. At 8192 (about 200 per batch)
  // there are too few samples of each length to do both: see docs/plan_history.md.
  const auto lengths = long_tailed(60000, 9, 2048);
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 2048;
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 8, 1);
  EXPECT_LT(metrics.padding_waste(), 0.02);
  EXPECT_LT(metrics.imbalance(CostKind::kLinear).mean, 1.03);
  EXPECT_LT(metrics.imbalance(CostKind::kLinear).p99, 1.10);
  EXPECT_LT(std::abs(metrics.lag1()), 0.2);
  EXPECT_LT(metrics.repeated_pair_share(), 0.10);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
}

// The automatic noise cap is the widest that fits the padding allowance: the noisy
// sort of a window's worth of evenly spaced samples fits at the chosen cap (unless it
// is the narrowest, taken untried) and not at the next wider one. Data whose lengths
// are all equal (where noise costs nothing) gets the widest.
TEST(TokenBudgetPlanner, AutomaticNoiseCapIsTheWidestThatFitsThePaddingAllowance) {
  const auto lengths = long_tailed(60000, 9, 16384);
  SpanLengths source(lengths);
  std::set<double> chosen_caps;
  for (uint64_t tokens : {2048, 4096, 6144, 8192, 16384}) {
    BucketingOptions o;
    o.tokens_per_rank = tokens;
    const BucketingOptions resolved = resolve_automatic(source, o);
    EXPECT_EQ(resolved.window, automatic_window(source, o));
    const double* chosen =
        std::find(std::begin(kNoiseCaps), std::end(kNoiseCaps), resolved.noise_cap);
    ASSERT_NE(chosen, std::end(kNoiseCaps)) << resolved.noise_cap;
    chosen_caps.insert(*chosen);
    std::vector<PlanItem> probes;
    const uint64_t n = lengths.size(), count = std::min<uint64_t>(n, resolved.window);
    for (uint64_t k = 0; k < count; ++k) {
      const uint64_t id = k * n / count;
      probes.push_back({id, std::min(lengths[id], o.tokens_per_rank)});
    }
    auto padding_at = [&](double cap) {
      BucketingOptions x = resolved;
      x.noise_cap = cap;
      return WindowPlanner(x, 1, 0, 0).noisy_sort_padding(probes);
    };
    SCOPED_TRACE(testing::Message() << tokens << " tokens, cap " << *chosen);
    if (chosen != std::begin(kNoiseCaps)) {
      EXPECT_LE(padding_at(*chosen), o.noise_cap_padding);
    }
    if (chosen + 1 != std::end(kNoiseCaps)) {
      EXPECT_GT(padding_at(chosen[1]), o.noise_cap_padding);
    }
  }
  EXPECT_GE(chosen_caps.size(), 2u) << "every budget chose the same cap; the test shows little";

  const std::vector<uint64_t> equal(5000, 300);
  SpanLengths equal_source(equal);
  BucketingOptions o;
  EXPECT_EQ(resolve_automatic(equal_source, o).noise_cap, std::end(kNoiseCaps)[-1]);
}

// Where the data leaves room, the wider noise re-batches fewer pairs from one epoch to
// the next than the narrowest cap does, within the padding target.
TEST(TokenBudgetPlanner, AutomaticNoiseCapRebatchesFewerPairs) {
  const auto lengths = long_tailed(60000, 9, 4096);
  SpanLengths source(lengths);
  auto plan_two_epochs = [&](double noise_cap) {
    BucketingOptions o;
    o.tokens_per_rank = 4096;
    o.noise_cap = noise_cap;
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, 8, 1);
    return std::make_pair(metrics.repeated_pair_share(), metrics.padding_waste());
  };
  const auto [narrow_pairs, narrow_padding] = plan_two_epochs(kNoiseCaps[0]);
  const auto [auto_pairs, auto_padding] = plan_two_epochs(0);
  EXPECT_LT(auto_pairs, narrow_pairs);
  EXPECT_LT(auto_padding, 0.02);
}

// The estimate behind the automatic cap, by hand: six samples of one token, three per
// batch; orders 012|345 then 013|245 keep 01 and 45 together, 2 of the 6 pairs. And the
// automatic window does not shrink with a sample cap: the long tail, which the cap does
// not touch, needs the same window (a smaller one padded capped plans 1-3%).
TEST(TokenBudgetPlanner, RepeatedPairEstimateByHandAndAWindowThatIgnoresTheCap) {
  BucketingOptions o;
  o.tokens_per_rank = 3;
  std::vector<PlanItem> first, second;
  for (uint64_t id : {0, 1, 2, 3, 4, 5}) first.push_back({id, 1});
  for (uint64_t id : {0, 1, 3, 2, 4, 5}) second.push_back({id, 1});
  const WindowPlanner planner(o, 1, 0, 0);
  EXPECT_EQ(planner.greedy_batches(first), (std::vector<uint32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(greedy_repeated_pair_share(planner, first, second), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(greedy_repeated_pair_share(planner, first, first), 1.0);

  const auto lengths = long_tailed(3000, 5, 4096);
  SpanLengths source(lengths);
  BucketingOptions capped;
  capped.tokens_per_rank = 1 << 20;
  const uint64_t window = automatic_window(source, capped);
  EXPECT_GT(window, 65536u);
  capped.max_batch_size = 64;
  EXPECT_EQ(automatic_window(source, capped), window);
}

// The cap and noise choosers sort one probe window many times, so they hand it over in
// the order the noisy sort starts from (sort_by_length) and the sort skips that step.
// The result must not depend on it: the same order from shuffled items, from items in
// length order, and from items in another epoch's length order (which is not this
// epoch's, so it is sorted again).
TEST(TokenBudgetPlanner, NoisySortIsTheSameFromAnyStartingOrder) {
  const auto lengths = long_tailed(20000, 9, 4096);  // many equal lengths: ties matter
  std::vector<PlanItem> shuffled;
  for (uint64_t id = 0; id < lengths.size(); ++id) shuffled.push_back({id, lengths[id]});
  std::reverse(shuffled.begin(), shuffled.end());
  BucketingOptions o;
  o.tokens_per_rank = 4096;
  o.cost.kind = CostKind::kQuadratic;
  o.noise_cap = 0.2;
  const WindowPlanner epoch0(o, 1, 0, 0), epoch1(o, 1, 0, 1);
  std::vector<PlanItem> in_order = shuffled, in_other_order = shuffled;
  epoch0.sort_by_length(in_order);
  epoch1.sort_by_length(in_other_order);
  EXPECT_TRUE(
      std::is_sorted(in_order.begin(), in_order.end(),
                     [](const PlanItem& a, const PlanItem& b) { return a.length < b.length; }));
  auto ids = [](const std::vector<PlanItem>& items) {
    std::vector<uint64_t> out;
    for (const PlanItem& p : items) out.push_back(p.id);
    return out;
  };
  EXPECT_NE(ids(in_order), ids(in_other_order));  // equal lengths in another tie order
  const std::vector<uint64_t> expected = ids(epoch0.noisy_sorted(shuffled));
  EXPECT_EQ(ids(epoch0.noisy_sorted(in_order)), expected);
  EXPECT_EQ(ids(epoch0.noisy_sorted(in_other_order)), expected);
  EXPECT_NE(ids(epoch1.noisy_sorted(in_order)), expected);
  EXPECT_DOUBLE_EQ(epoch0.noisy_sort_padding(in_order), epoch0.noisy_sort_padding(shuffled));
}

// Short samples under a quadratic budget: a batch filled to it holds over a thousand
// sentences of 5-20 tokens, a large share of those of its lengths in the window, so
// next epoch it meets many of the same mates again. The automatic sample cap, chosen
// from two epochs' greedy batches over the window, brings the repeated pairs under the
// 10% target without breaking the others; where full batches already meet it (long
// samples, linear cost: a few per batch), no cap is set. A cap the user sets is a
// ceiling: the same choice is made below it (a cap of 300 for memory would re-batch
// the pairs the automatic cap avoids), and a target of 0 keeps it exact.
TEST(TokenBudgetPlanner, AutomaticSampleCapRebatchesFewerPairsWhereFullBatchesRepeatThem) {
  const auto lengths = log_normal(60000, 6, 19, 12, 0.8);
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(8192);
  const uint64_t cap = resolve_automatic(source, o).max_batch_size;
  EXPECT_NE(std::find(std::begin(kBatchCaps), std::end(kBatchCaps), cap), std::end(kBatchCaps))
      << cap;
  BucketingOptions full = o;
  full.repeated_pairs_target = 0;
  EXPECT_EQ(resolve_automatic(source, full).max_batch_size, kNoBatchCap);
  const PlanMetrics capped = two_epochs_at_8(source, o);
  EXPECT_GT(two_epochs_at_8(source, full).repeated_pair_share(), 0.10);
  EXPECT_LE(capped.repeated_pair_share(), 0.10);
  EXPECT_LT(capped.padding_waste(), 0.02);
  EXPECT_LT(capped.imbalance(CostKind::kQuadratic).p99, 1.10);

  const auto long_lengths = log_normal(60000, 6, 20, 1500, 0.5);
  SpanLengths long_source(long_lengths);
  BucketingOptions linear;
  linear.tokens_per_rank = 8192;
  linear.oversize = OversizePolicy::kTruncate;
  EXPECT_EQ(resolve_automatic(long_source, linear).max_batch_size, kNoBatchCap);
  o.max_batch_size = 300;
  const BucketingOptions under_ceiling = resolve_automatic(source, o);
  EXPECT_EQ(under_ceiling.max_batch_size, std::min<uint64_t>(cap, 256));
  EXPECT_EQ(resolve_automatic(source, under_ceiling).max_batch_size, under_ceiling.max_batch_size)
      << "resolving resolved options again must not cap them again";
  EXPECT_LE(two_epochs_at_8(source, o).repeated_pair_share(), 0.10);
  BucketingOptions exact = o;
  exact.repeated_pairs_target = 0;
  EXPECT_EQ(resolve_automatic(source, exact).max_batch_size, 300u);
  EXPECT_GT(two_epochs_at_8(source, exact).repeated_pair_share(), 0.10);
}

// Changelog-like entries (3% long). Under a quadratic budget a full batch holds a thousand short
// entries and re-batches 40% of its pairs next epoch. Each cap is estimated with the noise it is
// planned with: capped batches span fewer lengths, so a wider noise fits the padding target, and
// re-batches fewer pairs. With the noise of full batches no cap on the ladder brings the estimate
// under the target (the choice before 2026-12-01, when no cap was set here: 2.2% padding, 41% of
// pairs again).
TEST(TokenBudgetPlanner, EachSampleCapIsEstimatedWithTheNoiseItIsPlannedWith) {
  const auto lengths = changelog_like(46000, 0.03);
  SpanLengths source(lengths);
  const BucketingOptions o = quadratic_budget(8192);
  const BucketingOptions resolved = resolve_automatic(source, o);
  const double full_noise = automatic_noise_cap(source, o);
  EXPECT_NE(std::find(std::begin(kBatchCaps), std::end(kBatchCaps), resolved.max_batch_size),
            std::end(kBatchCaps))
      << resolved.max_batch_size;
  EXPECT_GT(resolved.noise_cap, full_noise);
  const AutomaticCap chosen = automatic_batch_cap(source, o);
  EXPECT_EQ(chosen.max_batch_size, resolved.max_batch_size);
  EXPECT_EQ(chosen.noise_cap, resolved.noise_cap);
  BucketingOptions fixed_noise = o;
  fixed_noise.noise_cap = full_noise;
  fixed_noise.least_cap_share = 0;  // no fallback to the least estimate
  EXPECT_EQ(automatic_batch_cap(source, fixed_noise).max_batch_size, kNoBatchCap);

  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 8, 1);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
  EXPECT_LE(metrics.repeated_pair_share(), 0.10);
  EXPECT_LT(metrics.padding_waste(), 0.02);
  EXPECT_LE(metrics.imbalance(CostKind::kQuadratic).mean, 1.03);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).p99, 1.10);
}

// The changelog-like corpus with 2% long entries instead of 3%: no cap on the ladder
// brings the estimate under the target with noise that costs at most
// noise_cap_padding (1.2%), so full batches were kept, padding 2.8% and re-batching a
// quarter of their pairs. The chooser then lets noise cost up to
// noise_cap_padding_for_pairs (1.7%), and a cap with wider noise meets every target.
TEST(TokenBudgetPlanner, NoiseMaySpendMorePaddingWhereOtherwiseNoCapMeetsThePairsTarget) {
  const auto lengths = changelog_like(46000, 0.02);
  SpanLengths source(lengths);
  const BucketingOptions o = quadratic_budget(8192);
  BucketingOptions soft_only = o;
  soft_only.noise_cap_padding_for_pairs = o.noise_cap_padding;
  soft_only.least_cap_share = 0;  // no fallback to the least estimate either
  const AutomaticCap soft = automatic_batch_cap(source, soft_only);
  EXPECT_EQ(soft.max_batch_size, kNoBatchCap);
  const AutomaticCap chosen = automatic_batch_cap(source, o);
  EXPECT_NE(std::find(std::begin(kBatchCaps), std::end(kBatchCaps), chosen.max_batch_size),
            std::end(kBatchCaps))
      << chosen.max_batch_size;
  EXPECT_GT(chosen.noise_cap, soft.noise_cap);

  EXPECT_GT(two_epochs_at_8(source, soft_only).repeated_pair_share(), 0.10);
  const PlanMetrics metrics = two_epochs_at_8(source, o);
  EXPECT_LE(metrics.repeated_pair_share(), 0.10);
  EXPECT_LT(metrics.padding_waste(), 0.02);
  EXPECT_LE(metrics.imbalance(CostKind::kQuadratic).mean, 1.03);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).p99, 1.10);
}

// Whole documents (log-normal, median 400 words, sigma 1.5) at 16,384 tokens under
// quadratic cost: full batches hold most samples of a length, so they re-batch too
// many pairs (23.6%; they padded 2.3% and re-batched 17.7% before a window still above
// 2% was planned a third time with narrower noise), and no cap's estimate meets the
// target, even with the wider noise. The cap with the least estimate, under 3/4 of
// full batches', is taken anyway (least_cap_share), and its plan meets every target.
TEST(TokenBudgetPlanner, TheLeastEstimateCapIsTakenWhereNoneMeetsTheTarget) {
  const auto lengths = log_normal(27000, 5, 41, 400, 1.5, 16384);
  SpanLengths source(lengths);
  const BucketingOptions o = quadratic_budget(16384);
  BucketingOptions keep_full = o;
  keep_full.least_cap_share = 0;
  EXPECT_EQ(automatic_batch_cap(source, keep_full).max_batch_size, kNoBatchCap);
  EXPECT_EQ(automatic_batch_cap(source, o).max_batch_size, 64u);

  const PlanMetrics full = two_epochs_at_8(source, keep_full);
  EXPECT_GT(full.repeated_pair_share(), 0.10);
  const PlanMetrics capped = two_epochs_at_8(source, o);
  EXPECT_LT(capped.padding_waste(), 0.02);
  EXPECT_LE(capped.repeated_pair_share(), 0.10);
  EXPECT_LE(capped.imbalance(CostKind::kQuadratic).mean, 1.03);
  EXPECT_LT(capped.imbalance(CostKind::kQuadratic).p99, 1.10);
}

// Two epochs (seed 1) at 8 ranks as `evenfeed plan` plans them, epoch 1's deal steered
// away from epoch 0's batch mates (EpochMatesChain), every sample served once in each.
PlanMetrics two_steered_epochs_at_8(const LengthSource& source, const BucketingOptions& options) {
  const BucketingOptions o = resolve_automatic(source, options);
  PlanMetrics metrics(source, o.cost.a);
  EpochMatesChain chain(source, o, 1);
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    metrics.begin_epoch();
    TokenBudgetPlanner planner(source, o, 8, {1, epoch, {}}, chain.previous(epoch, 8));
    PlanStep step;
    while (planner.next(step)) metrics.add(step);
    metrics.end_epoch();
  }
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
  return metrics;
}

// Whole source files (log-normal, median 300 words, sigma 1.6) at 32,768 tokens under
// quadratic cost: the epoch holds few full-budget steps, and greedy batches of up to 64
// short files span so many lengths that even the narrowest noise pads more than the 2%
// target. No cap meets the pairs estimate, and the least one, the ladder's smallest
// (64), is halved because at 32 the narrowest noise fits the padding target; there the
// plan at 8 ranks meets every target. At 64 (with the narrowest noise, as chosen
// before) it re-batched 12.5% of its pairs at 1.89% padding; `code_files` at 32,768
// (docs/plan_history.md) padded 2.12% there.
TEST(TokenBudgetPlanner, TheCapIsHalvedBelowTheLadderWhereTheNoiseAloneOverpads) {
  const auto lengths = log_normal(19000, 2, 43, 300, 1.6, 32768);
  SpanLengths source(lengths);
  const BucketingOptions o = quadratic_budget(32768);
  EXPECT_EQ(automatic_batch_cap(source, o).max_batch_size, 32u);
  BucketingOptions at_ladder_end = o;  // what was chosen before the cap went below 64
  at_ladder_end.max_batch_size = 64;
  at_ladder_end.repeated_pairs_target = 0;
  at_ladder_end.noise_cap = kNoiseCaps[0];
  std::vector<PlanItem> items;  // one window holds them all
  for (uint64_t id = 0; id < lengths.size(); ++id) items.push_back({id, lengths[id]});
  EXPECT_GT(WindowPlanner(at_ladder_end, 1, 0, 0).noisy_sort_padding(items), kPaddingTarget);

  EXPECT_GT(two_steered_epochs_at_8(source, at_ladder_end).repeated_pair_share(), 0.10);
  const PlanMetrics halved = two_steered_epochs_at_8(source, o);
  EXPECT_LT(halved.padding_waste(), kPaddingTarget);
  EXPECT_LE(halved.repeated_pair_share(), 0.10);
  EXPECT_LE(halved.imbalance(CostKind::kQuadratic).mean, 1.03);
  EXPECT_LT(halved.imbalance(CostKind::kQuadratic).p99, 1.10);
}

// Dealing a window's samples among its batches (BucketingOptions::mix_batches) keeps
// every batch's count and longest sample, so each step's per-rank costs, the padding and
// the balance are those of the undealt plan (only the step order may differ: it is
// chosen by step mean length, which the deal moves). Batch mates are no longer just
// neighbours in length, who on a corpus this small meet again every epoch.
TEST(TokenBudgetPlanner, DealingKeepsEveryStepsCostsButScattersBatchMates) {
  const auto lengths = log_normal(20000, 9, 29, 40, 0.9);
  SpanLengths source(lengths);
  BucketingOptions mixed = quadratic_budget(8192);
  mixed.repeated_pairs_target = 0;  // the same batches, uncapped, in both plans
  mixed.padding_guard = 0;          // ... with the noise as set: the deal alone differs
  BucketingOptions runs = mixed;
  runs.mix_batches = false;
  auto plan = [&](const BucketingOptions& o, PlanMetrics& metrics) {
    std::vector<Shape> shapes;
    for (uint32_t epoch = 0; epoch < 2; ++epoch) {
      metrics.begin_epoch();
      TokenBudgetPlanner planner(source, o, 8, {4, epoch, {}});
      PlanStep step;
      while (planner.next(step)) {
        metrics.add(step);
        add_shape(step, lengths, shapes);
      }
      metrics.end_epoch();
    }
    return shapes;
  };
  PlanMetrics mixed_metrics(source, mixed.cost.a), run_metrics(source, runs.cost.a);
  std::vector<Shape> mixed_shapes = plan(mixed, mixed_metrics),
                     run_shapes = plan(runs, run_metrics);
  std::sort(mixed_shapes.begin(), mixed_shapes.end());
  std::sort(run_shapes.begin(), run_shapes.end());
  EXPECT_EQ(mixed_shapes, run_shapes);
  EXPECT_NEAR(mixed_metrics.padding_waste(), run_metrics.padding_waste(), 1e-12);
  EXPECT_NEAR(mixed_metrics.imbalance(CostKind::kQuadratic).mean,
              run_metrics.imbalance(CostKind::kQuadratic).mean, 1e-12);
  EXPECT_EQ(mixed_metrics.total_dropped() + mixed_metrics.total_duplicated(), 0u);
  EXPECT_GT(run_metrics.repeated_pair_share(), 0.15);
  EXPECT_LT(mixed_metrics.repeated_pair_share(), 0.7 * run_metrics.repeated_pair_share());
}

// Borrowing short samples for a final step's light batch pads each one to that batch's
// longest. On a small smooth corpus at 64 ranks it filled batches of 1,300-token samples
// with 20-token ones and padded the epoch 4.8%; it now stops where the window's padding
// would pass 1.8%.
TEST(TokenBudgetPlanner, BorrowingForALightFinalBatchStopsAtThePaddingTarget) {
  const auto lengths = log_normal(40000, 1, 17, 40, 1.6);
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(8192);
  PlanMetrics metrics(source, o.cost.a);
  plan_epochs(metrics, source, o, 64, 0, 1);
  EXPECT_LT(metrics.padding_waste(), 0.025);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, 1.15);
  EXPECT_EQ(metrics.total_dropped(), 0u);
  EXPECT_EQ(metrics.total_duplicated(), 0u);
}

// Source files cut to a 2,048-token context: `n` lengths drawn from the 40-quantiles of
// a JDK's 15,224 .java files so cut (a quarter of them 219-297 tokens, a sixth at the
// cut), linearly between quantiles.
std::vector<uint64_t> java_files_cut_to_2048(uint64_t n, uint64_t seed) {
  static constexpr double kQuantiles[] = {
      31,   219,  239,  255,  269,  284,  297,  311,  329,  348,  369,  390,  414, 438,
      463,  492,  524,  550,  566,  593,  628,  675,  721,  773,  842,  912,  982, 1078,
      1181, 1317, 1449, 1609, 1797, 2041, 2048, 2048, 2048, 2048, 2048, 2048, 2048};
  constexpr size_t kSteps = std::size(kQuantiles) - 1;
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(seed, RngStream::kSynth, 61, i);
    const double at = rng.uniform() * kSteps;
    const size_t k = std::min(static_cast<size_t>(at), kSteps - 1);
    const double l = kQuantiles[k] + (at - k) * (kQuantiles[k + 1] - kQuantiles[k]);
    out[i] = static_cast<uint64_t>(l);
  }
  return out;
}

// At 8 ranks (quadratic, 8,192 tokens) such files are planned level, exactly once, at
// little padding. The JDK's own files so cut once left the epoch's final step with one
// batch of a few short files beside batches of mid-length ones (max/mean 1.13, until
// plan revision 38: lend_to_light.h); these drawn from their quantiles
// plan level with and without that change, so this guards the shape, not the change
// (docs/plan_history.md, forty-sixth session).
TEST(TokenBudgetPlanner, SourceFilesCutToAContextPlanLevelAtEightRanks) {
  const BucketingOptions o = quadratic_budget(8192);
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const auto lengths = java_files_cut_to_2048(15224, seed);
    SpanLengths source(lengths);
    const PlanMetrics metrics = expect_level(source, resolve_automatic(source, o), 8, seed,
                                             CostKind::kQuadratic, 1.005, 1.05);
    EXPECT_LT(metrics.padding_waste(), 0.02);
    EXPECT_LT(metrics.repeated_pair_share(), 0.1);
  }
}

// A corpus of short entries with lumps: about 3% of samples alone cost an eighth to
// most of the budget under quadratic cost, and 0.4% are truncated to it. At 64 ranks
// the epoch's leftover can hold more lumps than there are ranks, which forces a second
// final step; without more fine-grained samples that step was nearly empty (a third of
// the ranks with nothing, max/mean 3.5 at seed 5). Seeds 5-7 each stay level. Since
// 2026-12-02 the automatic cap is 64 here (noise 0.2): the short samples a batch of 64
// cannot lift to a lump's cost once left a final step of six lumps among light batches
// at seed 6 (max/mean 1.64 after swaps), until finish_level tried setting them aside.
TEST(TokenBudgetPlanner, MoreLumpsThanRanksLeaveNoNearEmptyFinalStep) {
  const uint64_t n = 40000;
  std::vector<uint64_t> lengths(n);
  for (uint64_t i = 0; i < n; ++i) {
    CounterRng rng(3, RngStream::kSynth, 11, i);
    const double kind = rng.uniform();
    double l = 40 * std::exp(rng.normal());
    if (kind < 0.03) l = 1000 + rng.uniform() * 6000;
    if (kind < 0.004) l = 9000;
    lengths[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, 20000);
  }
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 8192;
  o.cost.kind = CostKind::kQuadratic;
  o.oversize = OversizePolicy::kTruncate;
  for (uint64_t seed : {5, 6, 7}) expect_level_at_64(source, o, seed, {1.3, 1.06, 0.025});
}

// Documents cut to the budget (fewer than the ranks) and samples too dear to share a
// batch (costing 0.5-0.85 of the budget) left for the epoch's end, among many short
// samples: cut W at a time, one final step held all the mid-cost singletons beside
// light batches (max/mean 1.20-1.21 at seeds 1 and 2). Placed as lumps, with partners
// cut to measure from the leftover's mid-length samples, 1.05-1.06 (finish_level).
TEST(TokenBudgetPlanner, SingletonsOfMixedCostArePlacedAsLumps) {
  const uint64_t tokens = 8192;
  const double a = CostModel{}.a, budget = static_cast<double>(tokens) * (a + tokens);
  std::vector<uint64_t> lengths = log_normal(100000, 4, 31, 100, 1.0);
  for (int k = 0; k < 40; ++k) lengths.push_back(tokens + 1000);
  for (int k = 0; k < 25; ++k) {
    const double cost = (0.5 + 0.35 * (k + 0.5) / 25) * budget;
    lengths.push_back(static_cast<uint64_t>((-a + std::sqrt(a * a + 4 * cost)) / 2));
  }
  for (int k = 0; k < 100; ++k) {
    CounterRng rng(4, RngStream::kSynth, 32, k);
    lengths.push_back(static_cast<uint64_t>(tokens * (0.1 + 0.5 * rng.uniform())));
  }
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(tokens);
  o.oversize = OversizePolicy::kTruncate;
  for (uint64_t seed : {1, 2}) expect_level_at_64(source, o, seed, {1.10, 1.03, 0.02});
}

// Like Python and C sources at 32,768 tokens, quadratic, 64 ranks, a cap of 32: 11
// documents cut to the budget, 12 samples too dear to share a batch (0.51-0.93 of it),
// 17 in the awkward band (18,600-21,700 tokens: batches of one or two, pairs under 0.95
// of the budget), 1,200 mid-length (2,000-18,000) and 12,000 short (10-3,000), all
// spread by the golden ratio's multiples. Paired as the lumps' dearest partners, the
// band left the worst step at 1.138; placed alone as lumps (FinishWay::
// awkward_as_lumps), 1.114.
std::vector<uint64_t> awkward_band_corpus() {
  const double a = CostModel{}.a, budget = 32768.0 * (a + 32768.0);
  uint64_t k = 0;
  auto next = [&k] { return std::fmod(static_cast<double>(++k) * 0.6180339887498949, 1.0); };
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<uint64_t>(std::exp(std::log(lo) + next() * std::log(hi / lo)));
  };
  std::vector<uint64_t> lengths(11, 32768);
  for (int n = 0; n < 12; ++n) {
    const double cost = (0.51 + 0.42 * next()) * budget;
    lengths.push_back(static_cast<uint64_t>((-a + std::sqrt(a * a + 4 * cost)) / 2));
  }
  for (int n = 0; n < 17; ++n) lengths.push_back(static_cast<uint64_t>(18600 + 3100 * next()));
  for (int n = 0; n < 1200; ++n) lengths.push_back(log_uniform(2000, 18000));
  for (int n = 0; n < 12000; ++n) lengths.push_back(log_uniform(10, 3000));
  return lengths;
}

// One epoch of `lengths` at 64 ranks, quadratic, 32,768 tokens, a sample cap of exactly
// `cap` and the noise's cap at 0.05, as the sweeps plan such corpora: its worst step
// and mean max/mean under `bounds`, padding under 2%.
void expect_capped_epoch_at_64(const std::vector<uint64_t>& lengths, uint64_t cap,
                               LevelBounds bounds) {
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(32768);
  o.max_batch_size = cap;
  o.repeated_pairs_target = 0;  // exactly `cap`
  o.noise_cap = 0.05;
  const PlanMetrics metrics = one_epoch(source, o, 64);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, bounds.worst);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).mean, bounds.mean);
  EXPECT_LT(metrics.padding_waste(), bounds.padding);
}

TEST(TokenBudgetPlanner, TheAwkwardBandMayBePlacedAsLumps) {
  expect_capped_epoch_at_64(awkward_band_corpus(), 32, {1.125, 1.042, 0.02});
}

// Like Debian changelog entries at 32,768 tokens (46,143 entries, rank by rank in
// length order, log-interpolated between the corpus's lengths at these ranks, then
// spread by the golden ratio): 125 cut to the budget, 42 more too dear to share a batch
// (0.50-0.99 of it), a sparse band of 7,000-17,000-word entries, and many short ones.
std::vector<uint64_t> changelog_shaped_corpus() {
  const std::pair<double, double> at[] = {
      {0, 32768},   {125, 32768}, {126, 32507}, {140, 32507}, {141, 31420}, {150, 30149},
      {160, 24155}, {167, 22746}, {175, 22002}, {190, 17108}, {210, 14382}, {240, 11596},
      {280, 8258},  {330, 6454},  {400, 4305},  {500, 2841},  {650, 1758},  {850, 1035},
      {1100, 515},  {1500, 304},  {2000, 232},  {3000, 168},  {4500, 124},  {7000, 96},
      {10000, 75},  {15000, 56},  {22000, 41},  {30000, 30},  {38000, 23},  {44000, 18},
      {46143, 1}};
  std::vector<uint64_t> by_rank;
  for (size_t k = 0; k + 1 < std::size(at); ++k) {
    const auto [r0, l0] = at[k];
    const auto [r1, l1] = at[k + 1];
    for (double r = r0; r < r1; ++r) {
      const double t = (r - r0) / (r1 - r0);
      by_rank.push_back(std::max<uint64_t>(
          1, std::llround(std::exp(std::log(l0) + t * (std::log(l1) - std::log(l0))))));
    }
  }
  std::vector<size_t> order(by_rank.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [](size_t a, size_t b) {
    return std::fmod(static_cast<double>(a) * 0.6180339887498949, 1.0) <
           std::fmod(static_cast<double>(b) * 0.6180339887498949, 1.0);
  });
  std::vector<uint64_t> lengths;
  for (size_t i : order) lengths.push_back(by_rank[i]);
  return lengths;
}

// The steps of lumps and the step of the sparse band, planned step by step, left the
// worst step at 1.18 (lumps at 0.50-0.99 of the budget beside a plateau at it; entries
// of 7,800-11,400 words two to a batch under a level three of them pass). Planned again
// together (regroup_dearest): the lumps dealt evenly, their partners cut first from the
// entries awkward at the level left over: 1.107.
TEST(TokenBudgetPlanner, TheDearestStepsArePlannedAgainTogether) {
  expect_capped_epoch_at_64(changelog_shaped_corpus(), 64, {1.12, 1.03, 0.02});
}

// A small corpus at 8 ranks: documents cut to the budget, samples too dear to share a
// batch (0.5-1.0 of the budget), coarse ones (0.25-0.5: 3,500-5,540 tokens), some
// mid-length and many short ones. The lumps' steps want partners near their cost, and
// cut in the samples' order the partners are the coarse samples, one to a piece (two
// would pass the step's dearest lump): at seeds 17, 21 and 30 the worst steps were
// 1.221, 1.240 and 1.155 (mean over steps 1.066, 1.062, 1.040). Cut from samples of
// one length (cut_fluid_pieces) as well, and the more level end kept: 1.092, 1.109 and
// 1.092 (1.056, 1.025, 1.028). Of seeds 1-40, 12 got more level and none less.
std::vector<uint64_t> lumpy_small_corpus(uint64_t seed) {
  std::vector<uint64_t> lengths;
  uint64_t draw = 0;
  auto uniform = [&](uint64_t lo, uint64_t hi) {
    CounterRng rng(seed, RngStream::kSynth, 40, draw++);
    return lo + static_cast<uint64_t>(rng.uniform() * static_cast<double>(hi - lo));
  };
  const uint64_t docs = uniform(0, 24), singles = uniform(4, 24), coarse = uniform(0, 16);
  const uint64_t mid = uniform(0, 32), short_ones = uniform(800, 4800);
  for (uint64_t k = 0; k < docs; ++k) lengths.push_back(8192);
  for (uint64_t k = 0; k < singles; ++k) lengths.push_back(uniform(5540, 8190));
  for (uint64_t k = 0; k < coarse; ++k) lengths.push_back(uniform(3500, 5540));
  for (uint64_t k = 0; k < mid; ++k) lengths.push_back(uniform(1000, 3500));
  for (uint64_t length : log_normal(short_ones, seed, 41, 33, 1.0))
    lengths.push_back(std::min<uint64_t>(length, 400));
  return lengths;
}

TEST(TokenBudgetPlanner, CoarsePartnersAreCutFromOneLength) {
  for (uint64_t seed : {17, 21, 30}) {
    const std::vector<uint64_t> lengths = lumpy_small_corpus(seed);
    SpanLengths source(lengths);
    const PlanMetrics metrics = one_epoch(source, quadratic_budget(8192), 8);
    EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, 1.12) << "seed " << seed;
    EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).mean, 1.06) << "seed " << seed;
  }
}

// A small corpus at 64 ranks, 16,384 tokens, quadratic: documents cut to the budget,
// 20-60 samples too dear to share a batch (11,600-14,500 tokens, 0.6-0.8 of the
// budget), 300-800 coarse ones (2,000-9,000) and thousands of short ones, all
// log-uniform: like HTML pages or whole /usr/share/doc files, whose lumps' steps need
// partners cut to measure from the rest.
std::vector<uint64_t> lumps_among_fine_samples(uint64_t seed) {
  std::vector<uint64_t> lengths;
  uint64_t draw = 0;
  auto uniform = [&](double lo, double hi) {
    CounterRng rng(seed, RngStream::kSynth, 42, draw++);
    return lo + rng.uniform() * (hi - lo);
  };
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<uint64_t>(std::exp(uniform(std::log(lo), std::log(hi))));
  };
  const auto docs = static_cast<uint64_t>(uniform(20, 60));
  const auto lumps = static_cast<uint64_t>(uniform(20, 60));
  const auto coarse = static_cast<uint64_t>(uniform(300, 800));
  const auto short_ones = static_cast<uint64_t>(uniform(3000, 8000));
  for (uint64_t k = 0; k < docs; ++k) lengths.push_back(16384);
  for (uint64_t k = 0; k < lumps; ++k)
    lengths.push_back(static_cast<uint64_t>(uniform(11600, 14500)));
  for (uint64_t k = 0; k < coarse; ++k) lengths.push_back(log_uniform(2000, 9000));
  for (uint64_t k = 0; k < short_ones; ++k) lengths.push_back(log_uniform(20, 2000));
  return lengths;
}

// Partners cut to measure that stop as soon as they reach 0.85 of their target leave
// their step that much below its dearest lump. Also cut going on to the target, the
// most level end kept: seeds 4, 6 and 22 went from worst steps 1.086, 1.092 and 1.093
// to 1.070, 1.068 and 1.070 (of seeds 1-24, 12 more level, 2 less by at most 0.004).
// The sample cap and noise are pinned to what the chooser took for all three until plan
// revision 20 (64 and 0.05), so the test measures the cut alone. Seed 6's cap is now 32:
// its narrowest noise pads 2.00% at 64 and 1.71% at 32 (greedy batches), and with
// partners of at most 32 samples its worst step here is 1.114 (at 8 ranks, two epochs,
// seed 0, its pairs fall from 22.3% to 13.9% and its p99 from 1.045 to 1.030).
TEST(TokenBudgetPlanner, PartnersCutToMeasureGoOnToTheirTarget) {
  BucketingOptions o = quadratic_budget(16384);
  o.max_batch_size = 64;
  o.repeated_pairs_target = 0;  // exactly 64
  o.noise_cap = 0.05;
  for (uint64_t seed : {4, 6, 22}) {
    const std::vector<uint64_t> lengths = lumps_among_fine_samples(seed);
    SpanLengths source(lengths);
    const PlanMetrics metrics = one_epoch(source, o, 64);
    EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, 1.08) << "seed " << seed;
    EXPECT_LT(metrics.padding_waste(), 0.02) << "seed " << seed;
  }
}

// The same shape at twice the lengths, 32,768 tokens, capped at 128: the most level end
// of a window (the plan's worst step 1.1238) took longer than one whose worst step was
// 0.0023 less level and whose steps were far more level on average, and padded 3.0%.
// With the quicker end kept (kQuickerShare), the plan pads 1.65%, its mean max/mean is
// 1.0645 (was 1.0882), and 91.0% of the ranks' time goes to the samples (was 87.3%).
// Of seeds 1-30 of this corpus and of the two shapes above, the only plan that changed.
TEST(TokenBudgetPlanner, AQuickerEndNearlyAsLevelIsKept) {
  std::vector<uint64_t> lengths = lumps_among_fine_samples(24);
  for (uint64_t& length : lengths) length *= 2;
  SpanLengths source(lengths);
  BucketingOptions o = quadratic_budget(32768);
  o.max_batch_size = 128;
  o.repeated_pairs_target = 0;  // exactly 128
  const PlanMetrics metrics = one_epoch(source, o, 64);
  EXPECT_GT(metrics.useful_share(CostKind::kQuadratic), 0.90);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).mean, 1.07);
  EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, 1.13);
  EXPECT_LT(metrics.padding_waste(), 0.02);
}

// Capped samples left over at a window's end, too few for steps of their own, joined
// the final cut and stood at their cap beside dearer batches. Cut together with the
// capped step of the longest samples instead (FinishWay::capped_merged): at 8 ranks,
// seed 24's worst step 1.1635 -> 1.0329, mean max/mean 1.0260 -> 1.0127, useful share
// 96.2% -> 97.3%; a small lumpy corpus at 16 ranks (seed 11), mean 1.161 -> 1.107 and
// useful share 77.7% -> 83.1%. Of 240 plans of the two shapes (seeds 1-40, 8, 16 and
// 64 ranks), 34 changed: the mean max/mean lower in 28, useful share higher in 25.
TEST(TokenBudgetPlanner, CappedLeftoversMergeWithACappedStep) {
  const std::vector<uint64_t> lumpy = lumps_among_fine_samples(24), small = lumpy_small_corpus(11);
  SpanLengths lumpy_source(lumpy), small_source(small);
  const PlanMetrics at8 = one_epoch(lumpy_source, quadratic_budget(16384), 8);
  EXPECT_LT(at8.imbalance(CostKind::kQuadratic).max, 1.06);
  EXPECT_LT(at8.imbalance(CostKind::kQuadratic).mean, 1.02);
  EXPECT_GT(at8.useful_share(CostKind::kQuadratic), 0.97);
  const PlanMetrics at16 = one_epoch(small_source, quadratic_budget(8192), 16);
  EXPECT_LT(at16.imbalance(CostKind::kQuadratic).mean, 1.13);
  EXPECT_GT(at16.useful_share(CostKind::kQuadratic), 0.81);
}

// Under a token bound, the ends a window tries often share their worst step (the
// plateau of lumps, placed alike by every way), and the first end tried was kept even
// where another was more level on every other step. Of two ends with equally level worst
// steps, the one more level on average is now kept (WindowPlanner::more_level): at 16
// ranks, 16,384 tokens, bounded at the budget, seed 8's mean max/mean 1.0645 -> 1.0393
// (worst step 1.150 both), useful share 92.9% -> 93.5%; long-tailed lengths at 8 ranks,
// 8,192 tokens, seed 20: 1.0166 -> 1.0079, useful share 96.0% -> 97.9%. Of 720 plans of
// three shapes (seeds 1-40; 8, 16 and 64 ranks; bounded or not), 89 changed: the mean
// lower in 85, useful share higher in 77.
// 60,000 sentences of 20-200 tokens, 48 documents cut to the budget of 4,096 tokens and
// 8 sparse ones at 0.70-0.93 of its cost, under a bound of 4,096 tokens: every document
// longer than 3,198 tokens costs more than any batch of shorter samples can.
std::vector<uint64_t> plateau_with_sparse_documents(uint64_t seed) {
  std::vector<uint64_t> lengths;
  for (uint64_t k = 0; k < 60000; ++k) {
    CounterRng rng(seed, RngStream::kSynth, 43, k);
    lengths.push_back(20 + static_cast<uint64_t>(rng.uniform() * 181));
  }
  lengths.insert(lengths.end(), 48, 4096);
  for (uint64_t k = 0; k < 8; ++k) lengths.push_back(3250 + 93 * k);
  return lengths;
}

// Two epochs at 8 ranks of plateau_with_sparse_documents(seed) for each of `seeds`,
// bounded at the budget, windows of `window` samples (0: automatic): every sample
// once, the worst step below `worst` and useful share above `useful`.
void expect_sparse_documents_level(uint64_t window, std::initializer_list<uint64_t> seeds,
                                   double worst, double useful) {
  BucketingOptions o = quadratic_budget(4096);
  o.max_batch_tokens = 4096;
  o.window = window;
  for (uint64_t seed : seeds) {
    const std::vector<uint64_t> lengths = plateau_with_sparse_documents(seed);
    SpanLengths source(lengths);
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, 8, seed);
    EXPECT_LT(metrics.imbalance(CostKind::kQuadratic).max, worst) << "seed " << seed;
    EXPECT_GT(metrics.useful_share(CostKind::kQuadratic), useful) << "seed " << seed;
    EXPECT_EQ(metrics.total_dropped(), 0u);
    EXPECT_EQ(metrics.total_duplicated(), 0u);
  }
}

// The documents arrive a few per window, in the global order. Those at the budget make
// whole steps as soon as eight are carried; the sparse ones were left to the last
// window, where runs of the cost order put them in a step of their own or beside a few
// at the budget: worst step 1.106-1.152 over seeds 1-3, two epochs at 8 ranks. Counted
// first (lump_census.h), they are taken into the whole steps at the budget as they
// come (spread_sparse_lumps): 1.048-1.064, useful share within 0.1 points. Fails
// without the spread.
TEST(TokenBudgetPlanner, SparseDocumentsAreSpreadOverTheStepsAtTheBudget) {
  expect_sparse_documents_level(4096, {1, 2, 3}, 1.07, 0.964);
}

// The same corpus in one window (the automatic window holds all of it): every document
// reaches the epoch's end, where runs of the cost order left the eight sparse ones in
// a step of their own at max/mean 1.152 (seeds 1-6). Dealt evenly over the whole steps
// of documents (FinishWay::deal_lumps, deal_lumps_evenly), the worst step is 1.041-1.086,
// useful share 99.1-99.3% against 99.4%. Fails without the dealt end.
TEST(TokenBudgetPlanner, InOneWindowSparseDocumentsAreDealtAmongThoseAtTheBudget) {
  expect_sparse_documents_level(0, {1, 2, 3, 4, 5, 6}, 1.10, 0.99);
}

TEST(TokenBudgetPlanner, OfEndsAsLevelAtTheWorstTheMoreLevelOnAverageIsKept) {
  const std::vector<uint64_t> lumpy = lumps_among_fine_samples(8),
                              tailed = long_tailed(20000, 20, 8192);
  SpanLengths lumpy_source(lumpy), tailed_source(tailed);
  BucketingOptions at16k = quadratic_budget(16384), at8k = quadratic_budget(8192);
  at16k.max_batch_tokens = 16384;
  at8k.max_batch_tokens = 8192;
  const PlanMetrics lumpy16 = one_epoch(lumpy_source, at16k, 16);
  EXPECT_LT(lumpy16.imbalance(CostKind::kQuadratic).mean, 1.05);
  EXPECT_GT(lumpy16.useful_share(CostKind::kQuadratic), 0.932);
  const PlanMetrics tailed8 = one_epoch(tailed_source, at8k, 8);
  EXPECT_LT(tailed8.imbalance(CostKind::kQuadratic).mean, 1.012);
  EXPECT_GT(tailed8.useful_share(CostKind::kQuadratic), 0.97);
}

// The same corpora: some window ends keep steps whose dearest batches are fine samples
// cut above the coarse ones beside them, or whose light batches could hold more. Single
// samples now move between steps (level_by_moves): at 16 ranks, seed 27's worst step
// 1.214 -> 1.191 and mean over steps 1.057 -> 1.049; at 8 ranks, seed 59's mean 1.036
// -> 1.027. Both fail without the moves.
TEST(TokenBudgetPlanner, SingleSamplesMoveToLevelTheWorstSteps) {
  const std::vector<uint64_t> lengths27 = lumpy_small_corpus(27),
                              lengths59 = lumpy_small_corpus(59);
  SpanLengths source27(lengths27), source59(lengths59);
  PlanMetrics metrics27(source27, CostModel{}.a), metrics59(source59, CostModel{}.a);
  plan_epochs(metrics27, source27, quadratic_budget(8192), 16, 1, 1);
  plan_epochs(metrics59, source59, quadratic_budget(8192), 8, 1, 1);
  EXPECT_LT(metrics27.imbalance(CostKind::kQuadratic).max, 1.20);
  EXPECT_LT(metrics27.imbalance(CostKind::kQuadratic).mean, 1.053);
  EXPECT_LT(metrics59.imbalance(CostKind::kQuadratic).mean, 1.031);
  for (const PlanMetrics* m : {&metrics27, &metrics59}) {
    EXPECT_EQ(m->total_dropped(), 0u);
    EXPECT_EQ(m->total_duplicated(), 0u);
  }
}

// An epoch whose leftover is mid-length lumps and a few hundred one-token samples: cut
// W ways in one step, the one-token samples would fill one rank's batch at a third of
// the others' cost (they cannot share a batch with the lumps without being padded to
// their length). They get a step of their own instead, and both steps are level.
TEST(TokenBudgetPlanner, ShortFillersLeftWithLumpsGetAStepOfTheirOwn) {
  std::vector<uint64_t> lengths;
  for (int i = 0; i < 64; ++i) lengths.push_back(100);  // 10 per batch: coarse
  for (int i = 0; i < 300; ++i) lengths.push_back(1);   // 1,000 per batch: fillers
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 1000;
  for (uint64_t seed : {1, 2, 3}) {
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, 8, seed, 1);
    EXPECT_LT(metrics.imbalance(CostKind::kLinear).max, 1.03) << "seed " << seed;
    EXPECT_EQ(metrics.padding_waste(), 0.0) << "seed " << seed;
    TokenBudgetPlanner planner(source, o, 8, {seed, 0, {}});
    Served served = serve(planner, lengths, o, 8);
    EXPECT_EQ(served.steps, 2u) << "seed " << seed;
    expect_exactly_once(served.samples, lengths.size());
  }
}

// Small corpora at 16 ranks: a window's last steps can end with a few light batches
// (or lumps of mixed cost) that no cut levels. Exchanging whole batches with the
// window's level steps does: worst steps were 1.304 (linear) and 1.244 (quadratic)
// before, 1.049 with the exchanges.
TEST(TokenBudgetPlanner, WorstStepIsLevelledByExchangingBatchesBetweenSteps) {
  for (const auto& [corpus, n, sigma, cost] : {std::tuple{11u, 4000u, 1.4, CostKind::kLinear},
                                               std::tuple{22u, 6000u, 1.2, CostKind::kQuadratic}}) {
    std::vector<uint64_t> lengths(n);
    for (uint64_t i = 0; i < n; ++i) {
      CounterRng rng(corpus, RngStream::kSynth, 13, i);
      const double l = 200 * std::exp(sigma * rng.normal());
      lengths[i] = std::clamp<uint64_t>(static_cast<uint64_t>(l), 1, 8192);
    }
    SpanLengths source(lengths);
    BucketingOptions o;
    o.tokens_per_rank = 8192;
    o.cost.kind = cost;
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, 16, 1);
    SCOPED_TRACE(cost_kind_name(cost));
    EXPECT_LT(metrics.imbalance(cost).max, 1.07);
    EXPECT_EQ(metrics.total_dropped(), 0u);
    EXPECT_EQ(metrics.total_duplicated(), 0u);
  }
}

// 5,000 log-normal lengths, median 500, cut to 4,096 (`salt` sets one test's corpora
// apart from another's).
std::vector<uint64_t> log_normal_lengths(uint64_t seed, uint64_t salt) {
  std::vector<uint64_t> lengths(5000);
  for (uint64_t i = 0; i < lengths.size(); ++i) {
    CounterRng rng(seed, RngStream::kSynth, salt, i);
    lengths[i] = std::clamp<uint64_t>(static_cast<uint64_t>(500 * std::exp(rng.normal())), 1, 4096);
  }
  return lengths;
}

// An epoch's steps as the batch exchanges see them: each batch's cost, each step the
// indices of its batches, and the max/mean of the worst step.
struct EpochCosts {
  std::vector<double> costs;
  std::vector<std::vector<size_t>> steps;
  double worst = 1;
};

EpochCosts epoch_costs(StepPlanner& planner, const std::vector<uint64_t>& lengths,
                       const CostModel& cost) {
  EpochCosts epoch;
  PlanStep step;
  while (planner.next(step)) {
    std::vector<size_t>& indices = epoch.steps.emplace_back();
    double dearest = 0, sum = 0;
    for (const RankBatch& b : step.ranks) {
      uint64_t longest = 0;
      for (uint64_t id : b.samples) longest = std::max(longest, lengths[id]);
      indices.push_back(epoch.costs.size());
      epoch.costs.push_back(cost.batch(b.samples.size(), longest));
      dearest = std::max(dearest, epoch.costs.back());
      sum += epoch.costs.back();
    }
    epoch.worst = std::max(epoch.worst, step_imbalance(dearest, sum, indices.size()));
  }
  return epoch;
}

// A small corpus, one window (every step planned together): 5,000 log-normal lengths,
// median 500, at 16 ranks, 4,096 tokens, quadratic. Each step's batches are cut from a
// stretch of the cost order, and a step whose few dearest batches set its max/mean
// could run them in a step that is longer anyway, for cheaper ones of its: 1-2 such
// steps an epoch over seeds 1-3 before shed_and_swap, none now. Every shed shortens a
// step and lengthens none (shed_to_level.h). Fails without it.
TEST(TokenBudgetPlanner, NoStepCanHandItsDearestBatchesToALongerStep) {
  BucketingOptions o = quadratic_budget(4096);
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<uint64_t> lengths = log_normal_lengths(seed, 61);
    SpanLengths source(lengths);
    TokenBudgetPlanner planner(source, o, 16, {seed, 0, {}});
    EpochCosts epoch = epoch_costs(planner, lengths, o.cost);
    EXPECT_EQ(shed_to_level(epoch.costs, epoch.steps, {.level_enough = 1.02}), 0u)
        << "seed " << seed;
  }
}

// The same kind of corpus in two windows: the first window's steps are held back and
// split in cost order with the second's (split_across_windows.h), so over the whole
// epoch (the two windows) no two steps can be split so any more, unless every step is
// level. Fails without the hold-back: each window split only its own steps.
TEST(TokenBudgetPlanner, StepsOfAdjacentWindowsAreSplitInCostOrderTogether) {
  BucketingOptions o = quadratic_budget(4096);
  o.window = 2500;
  size_t unlevel_epochs = 0;
  for (uint64_t seed : {1, 2, 3, 4}) {
    const std::vector<uint64_t> lengths = log_normal_lengths(seed, 62);
    SpanLengths source(lengths);
    TokenBudgetPlanner planner(source, o, 16, {seed, 0, {}});
    EpochCosts epoch = epoch_costs(planner, lengths, o.cost);
    if (epoch.worst <= 1.02) continue;
    ++unlevel_epochs;
    EXPECT_EQ(split_in_cost_order(epoch.costs, epoch.steps), 0u) << "seed " << seed;
  }
  EXPECT_GT(unlevel_epochs, 0u);  // not vacuous
}

TEST(TokenBudgetPlanner, OversizeSamplesAreNamedOrTruncated) {
  std::vector<uint64_t> lengths = {10, 20, 5000, 30};
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 1000;
  try {
    TokenBudgetPlanner p(source, o, 2, {});
    PlanStep step;
    while (p.next(step)) {
    }
    FAIL() << "an oversize sample was planned";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("sample 2 has length 5000"), std::string::npos) << what;
    EXPECT_NE(what.find("--oversize truncate"), std::string::npos) << what;
  }
  o.oversize = OversizePolicy::kTruncate;
  TokenBudgetPlanner p(source, o, 2, {});
  expect_exactly_once(serve(p, lengths, o, 2).samples, 4);
}

TEST(TokenBudgetPlanner, RefusesZeroLengthsZeroWorldAndForeignStates) {
  std::vector<uint64_t> lengths = {10, 0, 30};
  SpanLengths source(lengths);
  BucketingOptions o;
  o.tokens_per_rank = 100;
  EXPECT_THROW(
      {
        TokenBudgetPlanner p(source, o, 2, {});
        PlanStep step;
        while (p.next(step)) {
        }
      },
      Error);
  std::vector<uint64_t> fine = {10, 20, 30};
  SpanLengths ok(fine);
  EXPECT_THROW(TokenBudgetPlanner(ok, o, 0, {}), Error);
  EXPECT_THROW(TokenBudgetPlanner(ok, o, 2, {0, 0, {{2, 50}}}), Error);
  BucketingOptions too_tight = o;
  too_tight.max_batch_tokens = 99;  // a sample of the budget's length could not fit
  EXPECT_THROW(TokenBudgetPlanner(ok, too_tight, 2, {}), Error);
  std::vector<uint64_t> none;
  SpanLengths empty(none);
  EXPECT_THROW(TokenBudgetPlanner(empty, o, 2, {}), Error);
}

// Short sentences (log-normal, median 6 words, sigma 1.8) under a quadratic budget of
// 32,768 tokens: batches of a thousand of them, whose cuts alone pad about 2.5%, so the
// full noise (3.2%) passes the padding guard and the window is planned again with half
// of it. Below the guard (sigma 1.2, 1.6% padding) the plan is the same with or without.
TEST(TokenBudgetPlanner, AWindowPaddingPastTheGuardIsPlannedWithHalfTheNoise) {
  BucketingOptions guarded = quadratic_budget(32768);
  BucketingOptions unguarded = guarded;
  unguarded.padding_guard = 0;
  struct Figures {
    double padding, worst;
  };
  auto plan = [](const LengthSource& source, const BucketingOptions& o) {
    PlanMetrics metrics(source, o.cost.a);
    plan_epochs(metrics, source, o, 8, 1, 1);
    EXPECT_EQ(metrics.total_dropped(), 0u);
    EXPECT_EQ(metrics.total_duplicated(), 0u);
    return Figures{metrics.padding_waste(), metrics.imbalance(CostKind::kQuadratic).max};
  };
  const auto padded = log_normal(60000, 2, 29, 6, 1.8);  // one window
  SpanLengths padded_source(padded);
  const Figures without = plan(padded_source, unguarded);
  const Figures with = plan(padded_source, guarded);
  EXPECT_GT(without.padding, guarded.padding_guard);
  EXPECT_LT(with.padding, without.padding - 0.002);
  EXPECT_LE(with.worst, std::max(1.04, without.worst));

  const auto smooth = log_normal(60000, 2, 29, 9, 1.2);
  SpanLengths smooth_source(smooth);
  EXPECT_LT(plan(smooth_source, unguarded).padding, guarded.padding_guard);
  EXPECT_EQ(all_batches(TokenBudgetPlanner(smooth_source, guarded, 8, {1, 0, {}})),
            all_batches(TokenBudgetPlanner(smooth_source, unguarded, 8, {1, 0, {}})));
}

// Steering the deal away from last epoch's batch mates (epoch_mates.h): on a small
// corpus, where a window holds every sample of a length, epoch 1 re-batches fewer of
// epoch 0's pairs, and every step keeps its batches' counts and longest samples, so
// its costs, the padding and the balance.
TEST(TokenBudgetPlanner, FreshMatesRebatchFewerPairsAtTheSameCosts) {
  const auto lengths = log_normal(20000, 9, 29, 40, 0.9);
  SpanLengths source(lengths);
  const BucketingOptions o = resolve_automatic(source, quadratic_budget(8192));
  auto plan = [&](bool fresh, PlanMetrics& metrics) {
    EpochMatesChain chain(source, o, 4);
    EXPECT_TRUE(chain.active());
    std::vector<Shape> shapes;
    for (uint32_t epoch = 0; epoch < 2; ++epoch) {
      metrics.begin_epoch();
      TokenBudgetPlanner planner(source, o, 8, {4, epoch, {}},
                                 fresh ? chain.previous(epoch, 8) : nullptr);
      PlanStep step;
      while (planner.next(step)) {
        metrics.add(step);
        add_shape(step, lengths, shapes);
      }
      metrics.end_epoch();
    }
    std::sort(shapes.begin(), shapes.end());
    return shapes;
  };
  PlanMetrics fresh(source, o.cost.a), plain(source, o.cost.a);
  EXPECT_EQ(plan(true, fresh), plan(false, plain));
  EXPECT_NEAR(fresh.padding_waste(), plain.padding_waste(), 1e-12);
  EXPECT_NEAR(fresh.imbalance(CostKind::kQuadratic).mean,
              plain.imbalance(CostKind::kQuadratic).mean, 1e-12);
  EXPECT_NEAR(fresh.imbalance(CostKind::kQuadratic).max, plain.imbalance(CostKind::kQuadratic).max,
              1e-12);
  EXPECT_EQ(fresh.total_dropped() + fresh.total_duplicated(), 0u);
  EXPECT_LT(fresh.repeated_pair_share(), 0.9 * plain.repeated_pair_share());  // 12.8% against 15.9%
}

// A link the caller hands over (the epoch it served) and one the chain plans itself
// give the next epoch the same plan, so a resumed run (whose chain replays epochs 0 and
// 1) deals epoch 2 as the uninterrupted one did; resumed there at another world size,
// nothing is lost or served twice.
TEST(EpochMatesChain, ServedAndReplayedLinksPlanTheSameNextEpoch) {
  const auto lengths = log_normal(6000, 5, 31, 60, 1.0);
  SpanLengths source(lengths);
  const BucketingOptions o = resolve_automatic(source, quadratic_budget(4096));
  EpochMatesChain served(source, o, 7);
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    TokenBudgetPlanner planner(source, o, 4, {7, epoch, {}}, served.previous(epoch, 4));
    auto mates = std::make_shared<EpochMates>(lengths.size());
    PlanStep step;
    while (planner.next(step)) mates->add(step);
    served.remember(epoch, 4, mates);
  }
  EpochMatesChain replayed(source, o, 7);
  const auto whole =
      all_batches(TokenBudgetPlanner(source, o, 4, {7, 2, {}}, served.previous(2, 4)));
  EXPECT_EQ(whole,
            all_batches(TokenBudgetPlanner(source, o, 4, {7, 2, {}}, replayed.previous(2, 4))));
  // Another seed's chain steers epoch 2 elsewhere.
  EpochMatesChain other(source, o, 8);
  EXPECT_NE(whole, all_batches(TokenBudgetPlanner(source, o, 4, {7, 2, {}}, other.previous(2, 4))));

  TokenBudgetPlanner first(source, o, 4, {7, 2, {}}, replayed.previous(2, 4));
  Served before = serve(first, lengths, o, 4, 5);
  PlanState state{7, 2, {}};
  state.advance(4, before.steps);
  TokenBudgetPlanner rest(source, o, 3, state, replayed.previous(2, 4));
  Served after = serve(rest, lengths, o, 3);
  before.samples.insert(before.samples.end(), after.samples.begin(), after.samples.end());
  expect_exactly_once(before.samples, lengths.size());
}

// The chain holds 4 bytes per sample: above kMostSamplesRemembered it is off, as it is
// when the deal is (mix_batches) or the option is.
TEST(EpochMatesChain, OffForLargeDatasetsAndWhenNotDealing) {
  const SyntheticLengths large(kMostSamplesRemembered + 1, 3);
  BucketingOptions o = quadratic_budget(8192);
  EpochMatesChain off(large, o, 1);
  EXPECT_FALSE(off.active());
  EXPECT_EQ(off.previous(3, 8), nullptr);
  const auto lengths = log_normal(1000, 5, 31, 60, 1.0);
  SpanLengths small(lengths);
  EXPECT_TRUE(EpochMatesChain(small, o, 1).active());
  EXPECT_EQ(EpochMatesChain(small, o, 1).previous(0, 8), nullptr);  // epoch 0: none before
  o.fresh_mates = false;
  EXPECT_FALSE(EpochMatesChain(small, o, 1).active());
  o.fresh_mates = true;
  o.mix_batches = false;
  EXPECT_FALSE(EpochMatesChain(small, o, 1).active());
}

}  // namespace
}  // namespace evenfeed
