#include "bucketing/fallback_trial.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "bucketing/token_budget_planner.h"

namespace evenfeed {
namespace {

// The noise caps to try after `from`: the wider ones of kNoiseCaps, or none where the
// caller set the noise.
std::vector<double> wider_noises(const BucketingOptions& given, double from) {
  std::vector<double> out;
  if (given.noise_cap != 0) return out;
  for (const double noise_cap : kNoiseCaps)
    if (noise_cap > from) out.push_back(noise_cap);
  return out;
}

// The caps to try below the estimate's, largest first.
std::vector<uint64_t> smaller_caps(uint64_t settled_cap) {
  std::vector<uint64_t> out;
  for (uint64_t cap = std::min<uint64_t>(settled_cap / 2, 64); cap >= kSmallestTrialCap; cap /= 2)
    out.push_back(cap);
  return out;
}

}  // namespace

bool worth_a_fallback_search(const TrialFigures& f) {
  const bool balanced = f.imbalance_mean <= kImbalanceMeanTarget - kBalanceMarginMean &&
                        f.imbalance_p99 <= kImbalanceP99Target && std::abs(f.lag1) <= kLag1Target;
  const bool misses_padding_or_pairs =
      f.padding > kPaddingTarget || f.repeated_pairs > kRepeatedPairsTarget;
  return balanced && misses_padding_or_pairs;
}

BucketingOptions trial_fallback_batches(const LengthSource& lengths, const BucketingOptions& given,
                                        const BucketingOptions& settled,
                                        const CapTrialOptions& trial) {
  const uint64_t n = lengths.size();
  if (!given.fallback_trial || given.repeated_pairs_target <= 0 || !settled.pairs_estimate_missed ||
      n > kMostTrialSamples || n == 0)
    return settled;
  if (!worth_a_fallback_search(plan_first_epochs(lengths, settled, trial))) return settled;
  TrialPlans plans(lengths, trial, std::max<uint64_t>(1, kMostFallbackSamplePlans / n));
  // Whether `candidate` wins, while plans are left to measure it.
  auto wins = [&](const BucketingOptions& candidate) {
    const std::optional<TrialFigures> f = plans.measure(candidate);
    return f && could_win(*f, given.repeated_pairs_target);
  };
  // The first of `base` (unless it is planned already) and its wider noises that wins.
  auto first_win = [&](const BucketingOptions& base,
                       bool plan_base) -> std::optional<BucketingOptions> {
    if (plan_base && wins(base)) return base;
    for (const double noise_cap : wider_noises(given, base.noise_cap)) {
      BucketingOptions wider = base;
      wider.noise_cap = noise_cap;
      if (wins(wider)) return wider;
    }
    return std::nullopt;
  };
  if (auto won = first_win(settled, /*plan_base=*/false)) return *won;
  for (const uint64_t cap : smaller_caps(settled.max_batch_size))
    if (auto won = first_win(with_cap(lengths, given, settled, cap), /*plan_base=*/true))
      return *won;
  return settled;
}

}  // namespace evenfeed
