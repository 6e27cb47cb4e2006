#include "bucketing/settle_batching.h"

#include "bucketing/fallback_trial.h"
#include "bucketing/token_budget_planner.h"

namespace evenfeed {

SettledBatching settle_batching(const LengthSource& lengths, const BucketingOptions& given,
                                const CapTrialOptions& trial) {
  const BucketingOptions estimated = resolve_automatic(lengths, given);
  const BucketingOptions capped = trial_batch_cap(lengths, given, estimated, trial);
  SettledBatching out;
  out.options = trial_fallback_batches(lengths, given, capped, trial);
  out.doubled_by_cap_trial = capped.max_batch_size != estimated.max_batch_size;
  out.kept_by_fallback_trial = out.options.max_batch_size != capped.max_batch_size ||
                               out.options.noise_cap != capped.noise_cap;
  return out;
}

}  // namespace evenfeed
