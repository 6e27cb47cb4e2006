#include "bucketing/settle_batching.h"

#include <gtest/gtest.h>

#include <vector>

#include "bucketing/fallback_trial.h"
#include "bucketing/token_budget_planner.h"
#include "tests/support/fixtures.h"

namespace evenfeed {
namespace {

const CapTrialOptions kAt8{.world_size = 8, .seed = 0};

BucketingOptions truncating(uint64_t tokens, CostKind cost) {
  BucketingOptions given;
  given.tokens_per_rank = tokens;
  given.cost.kind = cost;
  given.oversize = OversizePolicy::kTruncate;
  return given;
}

void expect_same_plan_options(const BucketingOptions& a, const BucketingOptions& b) {
  EXPECT_EQ(a.max_batch_size, b.max_batch_size);
  EXPECT_EQ(a.noise_cap, b.noise_cap);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.max_batch_size_resolved, b.max_batch_size_resolved);
}

// The lumpy entries (cap_trial_test.cpp): the cap trial doubles the estimate's cap, and
// the estimate met the pairs target, so the fallback trial is not made.
TEST(SettleBatching, ReportsACapDoubledByTheCapTrial) {
  const std::vector<uint64_t> values = testing::lumpy_lengths(40000);
  const SpanLengths lengths(values);
  const BucketingOptions given = truncating(8192, CostKind::kLinear);
  const BucketingOptions estimated = resolve_automatic(lengths, given);
  const SettledBatching settled = settle_batching(lengths, given, kAt8);
  expect_same_plan_options(settled.options, trial_batch_cap(lengths, given, estimated, kAt8));
  EXPECT_EQ(settled.options.max_batch_size, 2 * estimated.max_batch_size);
  EXPECT_TRUE(settled.doubled_by_cap_trial);
  EXPECT_FALSE(settled.kept_by_fallback_trial);

  BucketingOptions no_trials = given;
  no_trials.cap_trial = no_trials.fallback_trial = false;
  const SettledBatching plain = settle_batching(lengths, no_trials, kAt8);
  expect_same_plan_options(plain.options, estimated);
  EXPECT_FALSE(plain.doubled_by_cap_trial);
  EXPECT_FALSE(plain.kept_by_fallback_trial);
}

// Source-file-like lengths (fallback_trial_test.cpp): the estimate falls back, and the
// fallback trial replaces its choice with a wider noise; off, the cap trial's stands.
TEST(SettleBatching, ReportsAChoiceReplacedByTheFallbackTrial) {
  const std::vector<uint64_t> values = testing::log_normal_file_lengths(3000, 300, 1.6);
  const SpanLengths lengths(values);
  const BucketingOptions given = truncating(8192, CostKind::kLinear);
  const BucketingOptions capped =
      trial_batch_cap(lengths, given, resolve_automatic(lengths, given), kAt8);
  const SettledBatching settled = settle_batching(lengths, given, kAt8);
  expect_same_plan_options(settled.options, trial_fallback_batches(lengths, given, capped, kAt8));
  EXPECT_GT(settled.options.noise_cap, capped.noise_cap);
  EXPECT_TRUE(settled.kept_by_fallback_trial);

  BucketingOptions off = given;
  off.fallback_trial = false;
  const SettledBatching kept = settle_batching(lengths, off, kAt8);
  expect_same_plan_options(kept.options, capped);
  EXPECT_FALSE(kept.kept_by_fallback_trial);
}

}  // namespace
}  // namespace evenfeed
