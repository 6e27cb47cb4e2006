#include "bucketing/settle_batching.h"

#include "bucketing/balance_trial.h"
#include "bucketing/fallback_trial.h"
#include "bucketing/token_budget_planner.h"

namespace evenfeed {

SettledBatching settle_batching(const LengthSource& lengths, const BucketingOptions& given,
                                const CapTrialOptions& caller_trial) {
  // One cache of measured plans for every trial below: each plans options another may
  // have planned.
  CapTrialOptions trial = caller_trial;
  if (!trial.figures) trial.figures = std::make_shared<TrialFiguresCache>();
  const BucketingOptions estimated = resolve_automatic(lengths, given);
  const BucketingOptions capped = trial_batch_cap(lengths, given, estimated, trial);
  const BucketingOptions fallen_back = trial_fallback_batches(lengths, given, capped, trial);
  SettledBatching out;
  out.options = trial_for_balance(lengths, given, fallen_back, trial);
  out.doubled_by_cap_trial = capped.max_batch_size != estimated.max_batch_size;
  out.kept_by_fallback_trial = fallen_back.max_batch_size != capped.max_batch_size ||
                               fallen_back.noise_cap != capped.noise_cap;
  out.raised_by_balance_trial = out.options.max_batch_size != fallen_back.max_batch_size;
  out.cap_before_balance_trial = fallen_back.max_batch_size;
  out.noise_narrowed_by_balance_trial = out.options.noise_cap != fallen_back.noise_cap;
  out.noise_cap_before_balance_trial = fallen_back.noise_cap;
  return out;
}

}  // namespace evenfeed
