#include "bucketing/cap_trial.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include "bucketing/length_source.h"
#include "bucketing/token_budget_planner.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

// A plan that meets every target of issue 3, each figure at its limit.
TrialFigures at_the_limits() {
  return {.padding = 0.02,
          .imbalance_mean = 1.03,
          .imbalance_p99 = 1.10,
          .repeated_pairs = 0.10,
          .lag1 = -0.2,
          .useful_share = 0.95};
}

TEST(CapTrial, EachTargetIsMetAtItsLimitAndMissedPastIt) {
  EXPECT_TRUE(meets_every_target(at_the_limits()));
  auto past = [](auto change) {
    TrialFigures f = at_the_limits();
    change(f);
    return meets_every_target(f);
  };
  EXPECT_FALSE(past([](TrialFigures& f) { f.padding = 0.0201; }));
  EXPECT_FALSE(past([](TrialFigures& f) { f.imbalance_mean = 1.0301; }));
  EXPECT_FALSE(past([](TrialFigures& f) { f.imbalance_p99 = 1.1001; }));
  EXPECT_FALSE(past([](TrialFigures& f) { f.repeated_pairs = 0.1001; }));
  EXPECT_FALSE(past([](TrialFigures& f) { f.lag1 = 0.2001; }));
  EXPECT_FALSE(past([](TrialFigures& f) { f.lag1 = -0.2001; }));
}

// Twice the cap is kept only when it meets every target with its pairs under the
// estimate's target too, and then when it is faster or the chosen cap misses a target;
// a tie keeps the chosen cap.
TEST(CapTrial, TheLargerCapWinsOnlyWithinTheTargetsAndFasterOrWhereTheChosenMisses) {
  constexpr double kLimit = 0.08;
  TrialFigures chosen = at_the_limits();
  chosen.repeated_pairs = kLimit;
  TrialFigures faster = chosen;
  faster.useful_share = 0.96;
  EXPECT_TRUE(larger_cap_wins(chosen, faster, kLimit));
  EXPECT_TRUE(could_win(faster, kLimit));
  EXPECT_FALSE(larger_cap_wins(chosen, chosen, kLimit));
  TrialFigures slower = chosen;
  slower.useful_share = 0.94;
  EXPECT_FALSE(larger_cap_wins(chosen, slower, kLimit));
  TrialFigures missing = chosen;
  missing.imbalance_p99 = 1.2;
  EXPECT_TRUE(larger_cap_wins(missing, slower, kLimit));
  TrialFigures faster_but_missing = faster;
  faster_but_missing.imbalance_mean = 1.031;
  EXPECT_FALSE(larger_cap_wins(chosen, faster_but_missing, kLimit));
  EXPECT_FALSE(larger_cap_wins(missing, faster_but_missing, kLimit));
  // Within the 10% target but past the estimate's 8%: no margin for other epochs.
  TrialFigures faster_near_the_pairs_target = faster;
  faster_near_the_pairs_target.repeated_pairs = 0.097;
  EXPECT_TRUE(meets_every_target(faster_near_the_pairs_target));
  EXPECT_FALSE(larger_cap_wins(chosen, faster_near_the_pairs_target, kLimit));
  EXPECT_FALSE(larger_cap_wins(missing, faster_near_the_pairs_target, kLimit));
  // Where twice the cap cannot win, whatever the chosen cap's figures, the trial plans
  // the chosen cap no further.
  EXPECT_FALSE(could_win(faster_near_the_pairs_target, kLimit));
  EXPECT_FALSE(could_win(faster_but_missing, kLimit));
}

// The lumpy entries at 8 ranks, 8,192 tokens, linear cost: the estimate caps their
// batches (512), and twice its cap plans the first two epochs faster within every
// target, re-batching 5.7% of the pairs (the trial there is also checked from the
// command line, plan_cli_test.cpp).
class LumpyTrial : public ::testing::Test {
 protected:
  LumpyTrial() : values_(testing::lumpy_lengths(40000)), lengths_(values_) {
    given_.tokens_per_rank = 8192;
    given_.oversize = OversizePolicy::kTruncate;
    resolved_ = resolve_automatic(lengths_, given_);
  }
  BucketingOptions tried(const BucketingOptions& given) const {
    return trial_batch_cap(lengths_, given, resolved_, {.world_size = 8, .seed = 0});
  }

  std::vector<uint64_t> values_;
  SpanLengths lengths_;
  BucketingOptions given_, resolved_;
};

// Its answer is twice the cap, with the noise chosen for that cap as for a caller's cap
// of that size (--max-batch-size 2C --pairs-target 0).
TEST_F(LumpyTrial, KeepsTwiceTheCapWithTheNoiseChosenForIt) {
  ASSERT_LT(resolved_.max_batch_size, kNoBatchCap) << "the estimate must cap these batches";
  const BucketingOptions out = tried(given_);
  EXPECT_EQ(out.max_batch_size, 2 * resolved_.max_batch_size);
  BucketingOptions by_hand = given_;
  by_hand.max_batch_size = out.max_batch_size;
  by_hand.repeated_pairs_target = 0;
  EXPECT_EQ(out.noise_cap, resolve_automatic(lengths_, by_hand).noise_cap);
  EXPECT_EQ(out.window, resolved_.window);
  EXPECT_TRUE(out.max_batch_size_resolved);
  EXPECT_EQ(out.repeated_pairs_target, given_.repeated_pairs_target);
}

// Planned through a runner (both caps at once, on two threads here), the trial keeps
// the cap it keeps one plan at a time: where twice the cap wins, and where a tighter
// pairs target keeps it from winning (the chosen cap's plan then made for nothing).
// Both threads keep their figures in one cache (run under ThreadSanitizer too).
TEST_F(LumpyTrial, KeepsTheSameCapWhenBothArePlannedAtOnce) {
  for (const double pairs_target : {given_.repeated_pairs_target, 0.02}) {
    BucketingOptions given = given_;
    given.repeated_pairs_target = pairs_target;
    const BucketingOptions resolved = resolve_automatic(lengths_, given);
    const BucketingOptions one_by_one =
        trial_batch_cap(lengths_, given, resolved, {.world_size = 8, .seed = 0});
    int runs = 0;
    const RunBoth on_two_threads = [&runs](const std::function<void()>& a,
                                           const std::function<void()>& b) {
      ++runs;
      std::thread other(a);
      b();
      other.join();
    };
    const auto cache = std::make_shared<TrialFiguresCache>();
    const BucketingOptions at_once =
        trial_batch_cap(lengths_, given, resolved,
                        {.world_size = 8, .seed = 0, .run_both = on_two_threads, .figures = cache});
    EXPECT_EQ(runs, 1);
    EXPECT_TRUE(cache->find(resolved).has_value());
    EXPECT_TRUE(
        cache->find(with_cap(lengths_, given, resolved, 2 * resolved.max_batch_size)).has_value());
    EXPECT_EQ(at_once.max_batch_size, one_by_one.max_batch_size) << pairs_target;
    EXPECT_EQ(at_once.noise_cap, one_by_one.noise_cap) << pairs_target;
    if (pairs_target == given_.repeated_pairs_target)
      EXPECT_EQ(at_once.max_batch_size, 2 * resolved.max_batch_size);
    else
      EXPECT_EQ(at_once.max_batch_size, resolved.max_batch_size);
  }
}

// Where no trial is to be made the resolved options come back as they are, though here
// a trial would double the cap: the trial off, no pairs target (the cap is then exact),
// twice the cap above the caller's ceiling, no cap chosen; and more than
// kMostTrialSamples samples (a trial of 2^21 + 1 synthetic samples would take seconds).
TEST_F(LumpyTrial, IsNotMadeWhereTheCapIsNotTheEstimatesOrTheCorpusIsLarge) {
  auto unchanged = [](const BucketingOptions& out, const BucketingOptions& in) {
    return out.max_batch_size == in.max_batch_size && out.noise_cap == in.noise_cap;
  };
  BucketingOptions off = given_;
  off.cap_trial = false;
  EXPECT_TRUE(unchanged(tried(off), resolved_));
  BucketingOptions exact = given_;
  exact.repeated_pairs_target = 0;
  EXPECT_TRUE(unchanged(tried(exact), resolved_));
  BucketingOptions low_ceiling = given_;
  low_ceiling.max_batch_size = 2 * resolved_.max_batch_size - 1;
  EXPECT_TRUE(unchanged(tried(low_ceiling), resolved_));
  BucketingOptions at_ceiling = given_;
  at_ceiling.max_batch_size = resolved_.max_batch_size;  // the cap is the caller's
  EXPECT_TRUE(unchanged(tried(at_ceiling), resolved_));
  const SyntheticLengths large(kMostTrialSamples + 1, 7);
  EXPECT_TRUE(unchanged(trial_batch_cap(large, given_, resolved_, {.world_size = 8}), resolved_));
}

// Plans measured once while a run's options are settled are not planned again: with a
// cache, plan_first_epochs keeps what it measures (the same figures as without one) and
// answers the same options from it, here a planted answer no plan would give, while
// other options are planned.
TEST(TrialFiguresCache, AnswersOptionsMeasuredBeforeAndPlansOthers) {
  const std::vector<uint64_t> values = testing::log_normal_file_lengths(3000, 300, 1.2);
  const SpanLengths lengths(values);
  BucketingOptions given;
  given.tokens_per_rank = 4096;
  given.oversize = OversizePolicy::kTruncate;
  const BucketingOptions options = resolve_automatic(lengths, given);
  CapTrialOptions trial{.world_size = 8, .seed = 0};
  const TrialFigures plain = plan_first_epochs(lengths, options, trial);
  trial.figures = std::make_shared<TrialFiguresCache>();
  const TrialFigures kept = plan_first_epochs(lengths, options, trial);
  EXPECT_EQ(kept.imbalance_mean, plain.imbalance_mean);
  EXPECT_EQ(kept.repeated_pairs, plain.repeated_pairs);
  ASSERT_TRUE(trial.figures->find(options).has_value());

  BucketingOptions other = with_cap(lengths, given, options, 16);
  ASSERT_FALSE(trial.figures->find(other).has_value());
  trial.figures->keep(other, {.padding = 0.5});
  EXPECT_EQ(plan_first_epochs(lengths, other, trial).padding, 0.5);
  other.noise_cap += 0.01;
  EXPECT_LT(plan_first_epochs(lengths, other, trial).padding, 0.5);
}

}  // namespace
}  // namespace evenfeed
