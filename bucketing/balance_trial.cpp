#include "bucketing/balance_trial.h"

#include <cmath>
#include <optional>
#include <vector>

#include "bucketing/fallback_trial.h"

namespace evenfeed {
namespace {

// 2, 4 and 8 times the settled cap: the caps a few-step epoch was seen to need lie
// there or at none (balance_trial.h).
constexpr int kMostDoublings = 3;

// The caps to try above `cap`, smallest first: its doublings below `ceiling`, then the
// ceiling itself (kNoBatchCap: no cap).
std::vector<uint64_t> larger_caps(uint64_t cap, uint64_t ceiling) {
  std::vector<uint64_t> out;
  uint64_t larger = cap;
  for (int k = 0; k < kMostDoublings && larger <= ceiling / 2; ++k) {
    larger *= 2;
    if (larger < ceiling) out.push_back(larger);
  }
  out.push_back(ceiling);
  return out;
}

// The settled noise cap times these, widest first: narrower noise pads less, and
// leaves the levelling steps the padding room they need (balance_trial.h).
constexpr double kNarrowerNoises[] = {0.7, 0.5};

// `noise_cap` times `factor`, to four decimals: what the report prints, so that
// `--noise-cap` with the printed figure plans the same (0.05 x 0.7 is 0.034999...).
double narrower_noise_cap(double noise_cap, double factor) {
  return std::round(noise_cap * factor * 1e4) / 1e4;
}

// Of the larger caps below or at `ceiling`, the one whose plan meets every target with
// the fewest pairs again; none where none meets them.
std::optional<BucketingOptions> fewest_pairs_larger_cap(const LengthSource& lengths,
                                                        const BucketingOptions& given,
                                                        const BucketingOptions& settled,
                                                        uint64_t ceiling, TrialPlans& plans) {
  std::optional<BucketingOptions> kept;
  double kept_pairs = 0;
  for (const uint64_t cap : larger_caps(settled.max_batch_size, ceiling)) {
    const BucketingOptions candidate = with_cap(lengths, given, settled, cap);
    const std::optional<TrialFigures> f = plans.measure(candidate);
    if (!f) break;
    if (!meets_every_target(*f) || (kept && f->repeated_pairs >= kept_pairs)) continue;
    kept = candidate;
    kept_pairs = f->repeated_pairs;
  }
  return kept;
}

// The widest of the narrower noise caps whose plan meets every target; none where none
// does.
std::optional<BucketingOptions> first_narrower_noise(const BucketingOptions& settled,
                                                     TrialPlans& plans) {
  for (const double factor : kNarrowerNoises) {
    BucketingOptions candidate = settled;
    candidate.noise_cap = narrower_noise_cap(settled.noise_cap, factor);
    const std::optional<TrialFigures> f = plans.measure(candidate);
    if (!f) break;
    if (meets_every_target(*f)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

double full_budget_steps(double total_cost, const BucketingOptions& options, uint32_t world_size) {
  return total_cost /
         (static_cast<double>(world_size) * options.cost.budget(options.tokens_per_rank));
}

double full_budget_steps(const LengthSource& lengths, const BucketingOptions& options,
                         uint32_t world_size) {
  const TruncatedLengths planned(lengths, planned_length_cap(options));
  double total = 0;
  for (uint64_t id = 0; id < planned.size(); ++id)
    total += options.cost.per_sample(planned.length(id));
  return full_budget_steps(total, options, world_size);
}

bool misses_only_balance(const TrialFigures& f) {
  return !meets_balance_targets(f) && meets_targets_but_balance(f);
}

BucketingOptions trial_for_balance(const LengthSource& lengths, const BucketingOptions& given,
                                   const BucketingOptions& settled, const CapTrialOptions& trial) {
  const uint64_t n = lengths.size();
  const uint64_t ceiling = given.max_batch_size > 0 ? given.max_batch_size : kNoBatchCap;
  const bool may_raise_cap = settled.max_batch_size < ceiling;
  // A noise cap the caller set is kept; with no noise (reach 0) it changes nothing.
  const bool may_narrow_noise = given.noise_cap == 0 && given.noise > 0;
  if (!given.cap_trial || given.repeated_pairs_target <= 0 ||
      !(may_raise_cap || may_narrow_noise) || n > kMostTrialSamples || n == 0 ||
      full_budget_steps(lengths, settled, trial.world_size) >= kFewBudgetSteps)
    return settled;
  // The settled plan's two epochs, then each candidate's, within the fallback trial's
  // allowance of sample-plans.
  TrialPlans plans(lengths, trial, kMostFallbackSamplePlans / n);
  if (plans.left() < 2 || !misses_only_balance(*plans.measure(settled))) return settled;
  if (may_raise_cap) {
    if (auto kept = fewest_pairs_larger_cap(lengths, given, settled, ceiling, plans)) return *kept;
  }
  if (may_narrow_noise) {
    if (auto kept = first_narrower_noise(settled, plans)) return *kept;
  }
  return settled;
}

}  // namespace evenfeed
