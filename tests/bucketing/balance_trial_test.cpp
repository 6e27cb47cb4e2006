#include "bucketing/balance_trial.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "bucketing/length_source.h"
#include "bucketing/settle_batching.h"
#include "bucketing/token_budget_planner.h"
#include "tests/bucketing/trial_figures.h"
#include "tests/support/log_normal_lengths.h"

namespace evenfeed {
namespace {

using testing::level_and_fresh;
using testing::level_and_fresh_but;
using testing::log_normal_lengths;

// A larger cap may mend balance only: a plan that meets every target, or misses
// padding, pairs or lag-1 as well, is left alone.
TEST(BalanceTrial, TriesOnlyAPlanThatMissesBalanceAlone) {
  auto with = [](auto change) { return misses_only_balance(level_and_fresh_but(change)); };
  EXPECT_FALSE(misses_only_balance(level_and_fresh()));
  EXPECT_TRUE(with([](TrialFigures& f) { f.imbalance_mean = 1.031; }));
  EXPECT_TRUE(with([](TrialFigures& f) { f.imbalance_p99 = 1.101; }));
  EXPECT_FALSE(with([](TrialFigures& f) { f.imbalance_mean = 1.03; }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.imbalance_mean = 1.031;
    f.repeated_pairs = 0.101;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.imbalance_p99 = 1.101;
    f.padding = 0.021;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.imbalance_mean = 1.031;
    f.lag1 = 0.21;
  }));
  // Pairs up to the target itself, not the estimate's 8%.
  EXPECT_TRUE(with([](TrialFigures& f) {
    f.imbalance_mean = 1.031;
    f.repeated_pairs = 0.099;
  }));
}

// The work in full-budget steps: each sample's cost, cut to the budget when the plan
// truncates, over W budgets.
TEST(BalanceTrial, CountsFullBudgetStepsOfTheSamplesAsPlanned) {
  const std::vector<uint64_t> values = {100, 300, 5000};
  const SpanLengths lengths(values);
  BucketingOptions options;
  options.tokens_per_rank = 1000;
  options.cost.kind = CostKind::kLinear;
  options.oversize = OversizePolicy::kTruncate;
  EXPECT_DOUBLE_EQ(full_budget_steps(lengths, options, 2), (100 + 300 + 1000) / 2000.0);
  options.cost.kind = CostKind::kQuadratic;
  options.cost.a = 500;
  auto cost = [](double l) { return 500 * l + l * l; };
  EXPECT_DOUBLE_EQ(full_budget_steps(lengths, options, 4),
                   (cost(100) + cost(300) + cost(1000)) / (4 * cost(1000)));
}

// 20,000 synthetic long-tailed lengths, quadratic, 64 ranks, 8,192 tokens: 3.9 steps of
// work an epoch. The estimate caps batches at 64 and its plan misses the imbalance mean
// alone; twice the cap meets every target, re-batching more pairs than the estimate's
// 8% but fewer than the target's 10%, and is kept. Where the trial is not asked for,
// the cap given is the estimate's (a ceiling), or the epoch has many steps (8 ranks),
// the estimate's cap stands.
class FewStepsSynthetic : public ::testing::Test {
 protected:
  FewStepsSynthetic() {
    given_.tokens_per_rank = 8192;
    given_.cost.kind = CostKind::kQuadratic;
    given_.oversize = OversizePolicy::kTruncate;
  }
  BucketingOptions tried(const BucketingOptions& given, uint32_t world_size) const {
    // The cache is of plans at 64 ranks only.
    CapTrialOptions at = at64_;
    if (world_size != at.world_size) at = {.world_size = world_size, .seed = 0};
    return trial_for_balance(lengths_, given, resolve_automatic(lengths_, given), at);
  }

  const SyntheticLengths lengths_{20000, 0};
  // One cache for the test's plans and the trial's (as settle_batching shares one), so
  // each plan of the first two epochs is made once.
  const CapTrialOptions at64_{
      .world_size = 64, .seed = 0, .figures = std::make_shared<TrialFiguresCache>()};
  BucketingOptions given_;
};

TEST_F(FewStepsSynthetic, KeepsALargerCapThatMeetsEveryTarget) {
  const BucketingOptions estimated = resolve_automatic(lengths_, given_);
  ASSERT_EQ(estimated.max_batch_size, 64u);
  ASSERT_LT(full_budget_steps(lengths_, estimated, 64), kFewBudgetSteps);
  ASSERT_TRUE(misses_only_balance(plan_first_epochs(lengths_, estimated, at64_)));
  const BucketingOptions out = tried(given_, 64);
  EXPECT_EQ(out.max_batch_size, 128u);
  const TrialFigures kept = plan_first_epochs(lengths_, out, at64_);
  EXPECT_TRUE(meets_every_target(kept));
  EXPECT_GT(kept.repeated_pairs, given_.repeated_pairs_target);  // the cap trial's limit
}

TEST_F(FewStepsSynthetic, LeavesTheCapWhereTheTrialIsNotToBeMade) {
  BucketingOptions off = given_;
  off.cap_trial = false;
  EXPECT_EQ(tried(off, 64).max_batch_size, 64u);
  BucketingOptions ceiling = given_;
  ceiling.max_batch_size = 64;
  EXPECT_EQ(tried(ceiling, 64).max_batch_size, 64u);
  ASSERT_GE(full_budget_steps(lengths_, resolve_automatic(lengths_, given_), 8), kFewBudgetSteps);
  EXPECT_EQ(tried(given_, 8).max_batch_size, resolve_automatic(lengths_, given_).max_batch_size);
}

// Where no larger cap can help (these batches have none), a narrower noise may: 5,000
// log-normal lengths (median 500, sigma 1: the "small" shape of
// bench/make_length_shapes.py), linear, 64 ranks, 8,192 tokens, an epoch of 7.6
// full-budget steps. With the automatic noise cap (0.05) the plan pads 1.84% and misses
// the imbalance mean (1.032); a narrower one, planned after it, meets every target and
// is kept. A noise cap the caller sets is kept as it is. (Of 24 such draws, seeds 1-24,
// 19 missed the imbalance targets with the automatic noise; the trial mended 5 of them,
// this draw one.)
TEST(BalanceTrial, KeepsANarrowerNoiseThatMeetsEveryTarget) {
  const std::vector<uint64_t> values = log_normal_lengths(7, 5000);
  const SpanLengths lengths(values);
  BucketingOptions given;
  given.tokens_per_rank = 8192;
  given.cost.kind = CostKind::kLinear;
  given.oversize = OversizePolicy::kTruncate;
  const CapTrialOptions at64{
      .world_size = 64, .seed = 0, .figures = std::make_shared<TrialFiguresCache>()};
  const SettledBatching settled = settle_batching(lengths, given, at64);
  ASSERT_TRUE(settled.noise_narrowed_by_balance_trial);
  EXPECT_FALSE(settled.raised_by_balance_trial);
  const double before = settled.noise_cap_before_balance_trial;
  EXPECT_LT(settled.options.noise_cap, before);
  BucketingOptions unnarrowed = settled.options;
  unnarrowed.noise_cap = before;
  EXPECT_TRUE(misses_only_balance(plan_first_epochs(lengths, unnarrowed, at64)));
  EXPECT_TRUE(meets_every_target(plan_first_epochs(lengths, settled.options, at64)));

  BucketingOptions noise_given = given;
  noise_given.noise_cap = before;
  const SettledBatching kept = settle_batching(lengths, noise_given, at64);
  EXPECT_FALSE(kept.noise_narrowed_by_balance_trial);
  EXPECT_EQ(kept.options.noise_cap, before);
}

}  // namespace
}  // namespace evenfeed
