// What a run plans with, settled once from the data before its first epoch is planned.
//
// The caller's options leave the window, the noise and the sample cap to the data. They
// are settled in three steps, each one's result the next one's start: resolve_automatic
// (token_budget_planner.h) estimates them; trial_batch_cap (cap_trial.h) plans twice
// the estimate's cap and keeps it where it wins; trial_fallback_batches
// (fallback_trial.h) searches other caps and noises where the estimate fell back;
// trial_for_balance (balance_trial.h) tries larger caps, then narrower noises, where the plan so
// far misses only balance in an epoch of few steps. `evenfeed plan` and the trainer both settle
// here, so that the plan a report shows is the plan a run of the same options serves.
#pragma once

#include "bucketing/bucketing_options.h"
#include "bucketing/cap_trial.h"
#include "bucketing/length_source.h"

namespace evenfeed {

struct SettledBatching {
  // Resolved: what every epoch's planner of the run takes.
  BucketingOptions options;
  // The cap trial kept twice the estimate's cap.
  bool doubled_by_cap_trial = false;
  // The fallback trial replaced the cap trial's choice (its cap, its noise or both).
  bool kept_by_fallback_trial = false;
  // The balance trial replaced the cap before it, `cap_before_balance_trial`, with a
  // larger one (options.max_batch_size; kNoBatchCap: none).
  bool raised_by_balance_trial = false;
  uint64_t cap_before_balance_trial = 0;
  // The balance trial replaced the noise cap before it, `noise_cap_before_balance_trial`,
  // with a narrower one (options.noise_cap).
  bool noise_narrowed_by_balance_trial = false;
  double noise_cap_before_balance_trial = 0;
};

// `given` (the caller's options) settled for a run at `trial.world_size` and
// `trial.seed`. Trials are made only where `given` asks for them (cap_trial,
// fallback_trial).
SettledBatching settle_batching(const LengthSource& lengths, const BucketingOptions& given,
                                const CapTrialOptions& trial);

}  // namespace evenfeed
