#include "bucketing/cap_trial.h"

#include <cmath>
#include <memory>

#include "bucketing/epoch_mates.h"
#include "bucketing/plan_metrics.h"
#include "bucketing/token_budget_planner.h"

namespace evenfeed {
namespace {

constexpr uint32_t kTrialEpochs = 2;

}  // namespace

TrialFiguresCache::Key TrialFiguresCache::key_of(const BucketingOptions& options) {
  return {options.max_batch_size, options.noise_cap, options.window};
}

std::optional<TrialFigures> TrialFiguresCache::find(const BucketingOptions& options) const {
  const Key wanted = key_of(options);
  const std::lock_guard lock(mutex_);
  for (const auto& [key, figures] : kept_)
    if (key == wanted) return figures;
  return std::nullopt;
}

void TrialFiguresCache::keep(const BucketingOptions& options, const TrialFigures& figures) {
  const std::lock_guard lock(mutex_);
  kept_.emplace_back(key_of(options), figures);
}

TrialFigures plan_first_epochs(const LengthSource& lengths, const BucketingOptions& options,
                               const CapTrialOptions& trial) {
  if (trial.figures) {
    if (const auto known = trial.figures->find(options)) return *known;
  }
  const TruncatedLengths measured(lengths, planned_length_cap(options));
  PlanMetrics metrics(measured, options.cost.a);
  EpochMatesChain chain(lengths, options, trial.seed);
  for (uint32_t epoch = 0; epoch < kTrialEpochs; ++epoch) {
    auto mates = chain.active() ? std::make_shared<EpochMates>(lengths.size()) : nullptr;
    TokenBudgetPlanner planner(lengths, options, trial.world_size, {trial.seed, epoch, {}},
                               chain.previous(epoch, trial.world_size));
    metrics.begin_epoch();
    PlanStep step;
    while (planner.next(step)) {
      metrics.add(step);
      if (mates) mates->add(step);
    }
    metrics.end_epoch();
    if (mates) chain.remember(epoch, trial.world_size, std::move(mates));
  }
  const ImbalanceSummary imbalance = metrics.imbalance(options.cost.kind);
  const TrialFigures figures{.padding = metrics.padding_waste(),
                             .imbalance_mean = imbalance.mean,
                             .imbalance_p99 = imbalance.p99,
                             .repeated_pairs = metrics.repeated_pair_share(),
                             .lag1 = metrics.lag1(),
                             .useful_share = metrics.useful_share(options.cost.kind)};
  if (trial.figures) trial.figures->keep(options, figures);
  return figures;
}

BucketingOptions with_cap(const LengthSource& lengths, const BucketingOptions& given,
                          const BucketingOptions& resolved, uint64_t cap) {
  BucketingOptions capped = given;
  capped.window = resolved.window;
  capped.max_batch_size = cap;
  capped.max_batch_size_resolved = false;
  capped.repeated_pairs_target = 0;  // exactly this cap
  capped = resolve_automatic(lengths, capped);
  capped.repeated_pairs_target = given.repeated_pairs_target;
  return capped;
}

bool meets_balance_targets(const TrialFigures& f) {
  return f.imbalance_mean <= kImbalanceMeanTarget && f.imbalance_p99 <= kImbalanceP99Target;
}

bool meets_targets_but_balance(const TrialFigures& f) {
  return f.padding <= kPaddingTarget && f.repeated_pairs <= kRepeatedPairsTarget &&
         std::abs(f.lag1) <= kLag1Target;
}

bool meets_every_target(const TrialFigures& f) {
  return meets_balance_targets(f) && meets_targets_but_balance(f);
}

bool could_win(const TrialFigures& larger, double pairs_limit) {
  return meets_every_target(larger) && larger.repeated_pairs <= pairs_limit;
}

bool larger_cap_wins(const TrialFigures& chosen, const TrialFigures& larger, double pairs_limit) {
  if (!could_win(larger, pairs_limit)) return false;
  return !meets_every_target(chosen) || larger.useful_share > chosen.useful_share;
}

BucketingOptions trial_batch_cap(const LengthSource& lengths, const BucketingOptions& given,
                                 const BucketingOptions& resolved, const CapTrialOptions& trial) {
  const uint64_t ceiling = given.max_batch_size > 0 ? given.max_batch_size : kNoBatchCap;
  const uint64_t cap = resolved.max_batch_size;
  const bool chosen_below_ceiling =
      given.cap_trial && given.repeated_pairs_target > 0 && cap < ceiling;
  if (!chosen_below_ceiling || cap > ceiling / 2 || lengths.size() > kMostTrialSamples ||
      lengths.size() == 0)
    return resolved;
  const BucketingOptions larger = with_cap(lengths, given, resolved, 2 * cap);
  if (trial.run_both) {
    TrialFigures twice, chosen;
    trial.run_both([&] { twice = plan_first_epochs(lengths, larger, trial); },
                   [&] { chosen = plan_first_epochs(lengths, resolved, trial); });
    return larger_cap_wins(chosen, twice, given.repeated_pairs_target) ? larger : resolved;
  }
  const TrialFigures twice = plan_first_epochs(lengths, larger, trial);
  // The chosen cap's plan is needed only when twice it can win.
  if (!could_win(twice, given.repeated_pairs_target)) return resolved;
  return larger_cap_wins(plan_first_epochs(lengths, resolved, trial), twice,
                         given.repeated_pairs_target)
             ? larger
             : resolved;
}

}  // namespace evenfeed
