#include "bucketing/fallback_trial.h"

#include <gtest/gtest.h>

#include <vector>

#include "bucketing/length_source.h"
#include "bucketing/token_budget_planner.h"
#include "tests/bucketing/trial_figures.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

using testing::level_and_fresh;
using testing::level_and_fresh_but;

// Searched past: a miss of padding or pairs, with the imbalance mean met by
// kBalanceMarginMean, and p99 and lag-1 met. Not: a plan meeting every target, or one
// whose balance or lag-1 misses too, or whose mean is within the target but not the
// margin (cap and noise do not mend balance, and searching there only costs time).
TEST(FallbackTrial, SearchesPastOnlyAPaddingOrPairsMissOfABalancedPlan) {
  auto with = [](auto change) { return worth_a_fallback_search(level_and_fresh_but(change)); };
  EXPECT_FALSE(worth_a_fallback_search(level_and_fresh()));
  EXPECT_TRUE(with([](TrialFigures& f) { f.repeated_pairs = 0.11; }));
  EXPECT_TRUE(with([](TrialFigures& f) { f.padding = 0.021; }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.repeated_pairs = 0.11;
    f.imbalance_mean = 1.031;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.padding = 0.021;
    f.imbalance_p99 = 1.11;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.repeated_pairs = 0.11;
    f.lag1 = -0.21;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) { f.imbalance_mean = 1.031; }));
  EXPECT_TRUE(with([](TrialFigures& f) {
    f.repeated_pairs = 0.11;
    f.imbalance_mean = 1.03 - kBalanceMarginMean;
    f.imbalance_p99 = 1.10;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.repeated_pairs = 0.11;
    f.imbalance_mean = 1.03 - kBalanceMarginMean + 0.001;
  }));
  EXPECT_FALSE(with([](TrialFigures& f) {
    f.padding = 0.021;
    f.imbalance_p99 = 1.101;
  }));
}

// Source-file-like lengths (log-normal, median 300) at 8 ranks: no sample cap's
// estimate meets the pairs target, and the estimate's choice plans the first two
// epochs over the pairs target.
class SmallCorpus : public ::testing::Test {
 protected:
  const CapTrialOptions kAt8{.world_size = 8, .seed = 0};

  void settle(double sigma, CostKind cost, uint64_t tokens) {
    values_ = testing::log_normal_file_lengths(3000, 300, sigma);
    lengths_ = SpanLengths(values_);
    given_ = {};
    given_.tokens_per_rank = tokens;
    given_.cost.kind = cost;
    given_.oversize = OversizePolicy::kTruncate;
    settled_ = trial_batch_cap(lengths_, given_, resolve_automatic(lengths_, given_), kAt8);
  }
  BucketingOptions tried(const BucketingOptions& given) const {
    return trial_fallback_batches(lengths_, given, settled_, kAt8);
  }
  TrialFigures figures(const BucketingOptions& options) const {
    return plan_first_epochs(lengths_, options, kAt8);
  }

  std::vector<uint64_t> values_;
  SpanLengths lengths_{values_};
  BucketingOptions given_, settled_;
};

// Sigma 1.6, linear, 8,192 tokens: a wider noise at the estimate's cap wins, and it is
// the narrowest that does.
TEST_F(SmallCorpus, KeepsTheNarrowestWiderNoiseThatWins) {
  settle(1.6, CostKind::kLinear, 8192);
  ASSERT_TRUE(settled_.pairs_estimate_missed);
  const TrialFigures estimated = figures(settled_);
  ASSERT_TRUE(worth_a_fallback_search(estimated));
  const BucketingOptions out = tried(given_);
  ASSERT_GT(out.noise_cap, settled_.noise_cap);
  EXPECT_EQ(out.max_batch_size, settled_.max_batch_size);
  EXPECT_EQ(out.window, settled_.window);
  const TrialFigures kept = figures(out);
  EXPECT_TRUE(could_win(kept, given_.repeated_pairs_target));
  EXPECT_LT(kept.repeated_pairs, estimated.repeated_pairs);
  for (const double noise_cap : kNoiseCaps) {
    if (noise_cap <= settled_.noise_cap || noise_cap >= out.noise_cap) continue;
    BucketingOptions narrower = settled_;
    narrower.noise_cap = noise_cap;
    EXPECT_FALSE(could_win(figures(narrower), given_.repeated_pairs_target)) << noise_cap;
  }
}

// Sigma 1.2, quadratic, 4,096 tokens: no noise at the estimate's cap wins, and a smaller
// cap does, below the estimate's ladder; every larger cap tried, with every noise, and
// the winning cap's narrower noises, lose.
TEST_F(SmallCorpus, TriesSmallerCapsWhereNoNoiseWins) {
  settle(1.2, CostKind::kQuadratic, 4096);
  ASSERT_TRUE(settled_.pairs_estimate_missed);
  ASSERT_TRUE(worth_a_fallback_search(figures(settled_)));
  const BucketingOptions out = tried(given_);
  ASSERT_LT(out.max_batch_size, std::min<uint64_t>(settled_.max_batch_size, 64));
  EXPECT_GE(out.max_batch_size, kSmallestTrialCap);
  EXPECT_TRUE(could_win(figures(out), given_.repeated_pairs_target));
  auto loses_at = [&](uint64_t cap, double from_noise, double below_noise) {
    BucketingOptions candidate =
        cap == settled_.max_batch_size ? settled_ : with_cap(lengths_, given_, settled_, cap);
    for (const double noise_cap : kNoiseCaps) {
      if (noise_cap < from_noise || noise_cap >= below_noise) continue;
      candidate.noise_cap = noise_cap;
      EXPECT_FALSE(could_win(figures(candidate), given_.repeated_pairs_target))
          << cap << " " << noise_cap;
    }
  };
  loses_at(settled_.max_batch_size, settled_.noise_cap, 1);
  for (uint64_t cap = std::min<uint64_t>(settled_.max_batch_size / 2, 64); cap > out.max_batch_size;
       cap /= 2)
    loses_at(cap, with_cap(lengths_, given_, settled_, cap).noise_cap, 1);
  loses_at(out.max_batch_size, with_cap(lengths_, given_, settled_, out.max_batch_size).noise_cap,
           out.noise_cap);
}

// A noise the caller set stays; only caps are tried (and one wins here).
TEST_F(SmallCorpus, KeepsTheCallersNoise) {
  settle(1.2, CostKind::kQuadratic, 4096);
  BucketingOptions callers = given_;
  callers.noise_cap = 0.1;
  settled_ = trial_batch_cap(lengths_, callers, resolve_automatic(lengths_, callers), kAt8);
  ASSERT_TRUE(settled_.pairs_estimate_missed);
  const BucketingOptions out = tried(callers);
  EXPECT_EQ(out.noise_cap, 0.1);
  EXPECT_LT(out.max_batch_size, settled_.max_batch_size);
  EXPECT_TRUE(could_win(figures(out), given_.repeated_pairs_target));
}

// No trial where it is off, there is no pairs target, the estimate met the pairs
// target (the lumpy entries' cap), or the corpus holds more than kMostTrialSamples: the
// settled options come back as they are, though here the trial would replace them.
TEST_F(SmallCorpus, IsNotMadeWhereTheCapIsNotAFallbackOrTheCorpusIsLarge) {
  settle(1.6, CostKind::kLinear, 8192);
  auto unchanged = [&](const BucketingOptions& out) {
    return out.max_batch_size == settled_.max_batch_size && out.noise_cap == settled_.noise_cap;
  };
  ASSERT_FALSE(unchanged(tried(given_)));
  BucketingOptions off = given_;
  off.fallback_trial = false;
  EXPECT_TRUE(unchanged(tried(off)));
  BucketingOptions exact = given_;
  exact.repeated_pairs_target = 0;
  EXPECT_TRUE(unchanged(tried(exact)));
  BucketingOptions estimate_met = settled_;
  estimate_met.pairs_estimate_missed = false;
  EXPECT_TRUE(unchanged(trial_fallback_batches(lengths_, given_, estimate_met, kAt8)));
  const std::vector<uint64_t> lumpy = testing::lumpy_lengths(40000);
  EXPECT_FALSE(resolve_automatic(SpanLengths(lumpy), given_).pairs_estimate_missed);
  const SyntheticLengths large(kMostTrialSamples + 1, 7);
  EXPECT_TRUE(unchanged(trial_fallback_batches(large, given_, settled_, kAt8)));
}

}  // namespace
}  // namespace evenfeed
