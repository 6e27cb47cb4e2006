// The automatic sample cap, measured one step further.
//
// automatic_batch_cap chooses a cap from an estimate: greedy batches of a window's worth
// of evenly spaced samples, not yet dealt, whose re-batched pairs it keeps under 8%.
// The estimate stands apart from the world size (a resume at another world size plans
// the same way), and it errs towards small caps: the steered deal re-batches far fewer
// pairs than it counts. Where the chooser capped, twice its cap is often a plan that
// meets every target and runs faster, and sometimes the only one that does
// (docs/plan_history.md: of the 56 capped configurations of two sweeps, twice the cap was
// faster in 23 that met every target either way, met them in one where the chosen cap
// missed, and lost a target in 12, which the estimate could not tell apart).
//
// So the trial plans the run's first two epochs, at its world size and seed, with the
// chosen cap and with twice it, and keeps twice it when that plan meets every target of
// issue 3, re-batching no more than the estimate's own target of pairs (8%, a margin
// for the epochs not planned), and either the chosen cap's plan misses a target or
// twice it spends more of the ranks' time on the samples (PlanMetrics::useful_share).
// Two epochs, because the re-batched pairs are a figure of two.
//
// Its result depends on the world size and the seed, so a run calls it once, at its
// start, and a resumed run takes the cap its checkpoint recorded (trainer.cpp) rather
// than trying again at its own world size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/length_source.h"

namespace evenfeed {

// Above this many samples the trial is not made: planning two epochs twice more costs
// about two seconds per million samples, and the measurements that motivate it
// (docs/plan_history.md) are of corpora of 0.02-1.8 million.
inline constexpr uint64_t kMostTrialSamples = uint64_t{1} << 21;

// The figures the targets of issue 3 are about, for one plan of two epochs.
struct TrialFigures {
  double padding = 0;         // padded slots over all slots
  double imbalance_mean = 0;  // per-step max/mean of the ranks' costs, cost in use
  double imbalance_p99 = 0;
  double repeated_pairs = 0;  // pairs batched together again in the next epoch
  double lag1 = 0;            // lag-1 correlation of the steps' mean length
  double useful_share = 0;    // cost in use (PlanMetrics::useful_share)
};

// Issue 3's targets besides padding (kPaddingTarget): per-step imbalance mean and p99,
// re-batched pairs, |lag-1|.
inline constexpr double kImbalanceMeanTarget = 1.03;
inline constexpr double kImbalanceP99Target = 1.10;
inline constexpr double kRepeatedPairsTarget = 0.10;
inline constexpr double kLag1Target = 0.2;

// Whether `f` meets every target of issue 3 (BENCHMARKS.md, "Against the targets"):
// the balance ones (the imbalance mean and p99) and the others (padding, pairs, lag-1).
bool meets_every_target(const TrialFigures& f);
bool meets_balance_targets(const TrialFigures& f);
bool meets_targets_but_balance(const TrialFigures& f);

// Whether the plan of `larger` is the one to keep over `chosen`'s (see above): it must
// meet every target with its re-batched pairs at most `pairs_limit` too, the estimate's
// own target (BucketingOptions::repeated_pairs_target, 8%). Two epochs measure one pair
// of epochs; the margin is for the others (Python and C sources, quadratic, 8,192
// tokens, 64 ranks: twice the cap re-batched 9.7% on epochs 0-1 at seed 0, 10.2% over
// four epochs at seed 1).
bool larger_cap_wins(const TrialFigures& chosen, const TrialFigures& larger, double pairs_limit);
// Its first half: whether `larger` can win at all (then the chosen cap is planned).
bool could_win(const TrialFigures& larger, double pairs_limit);

// Runs both tasks and returns once both are done, at once or one after the other.
// bucketing/ has no threads of its own (DESIGN.md); a caller that has them passes a
// runner (tools/ passes TBB's parallel_invoke). An exception from either task is
// passed on.
using RunBoth = std::function<void(const std::function<void()>&, const std::function<void()>&)>;

// The figures of plans already measured while one run's options are settled
// (settle_batching.h), so that a later trial does not plan the same options again: the
// balance trial measures the plan the cap and fallback trials settled on, which one of
// them has often planned already. Keyed by what the trials vary (the cap, the noise and
// the window), so one cache serves one corpus, one caller's options, one world size and
// seed. Shared safely by run_both's two tasks.
class TrialFiguresCache {
 public:
  std::optional<TrialFigures> find(const BucketingOptions& options) const;
  void keep(const BucketingOptions& options, const TrialFigures& figures);

 private:
  using Key = std::tuple<uint64_t, double, uint64_t>;  // cap, noise cap, window
  static Key key_of(const BucketingOptions& options);
  mutable std::mutex mutex_;
  std::vector<std::pair<Key, TrialFigures>> kept_;
};

struct CapTrialOptions {
  // The ranks and the seed of the run's first epoch.
  uint32_t world_size = 1;
  uint64_t seed = 0;
  // Unset: twice the cap is planned first, and the chosen cap only when twice it could
  // win (one plan fewer where it cannot). Set: both are planned through it, so at once
  // where it has two threads, and where twice the cap cannot win the chosen cap's plan
  // is spent work. The cap kept is the same either way. Both plans' windows are then
  // held at once: `evenfeed plan` on 1.8 million sentences (quadratic, 64 ranks, 16,384
  // tokens) took 25 s instead of 32 s, with a peak of 739 MB instead of 401 MB
  // (docs/plan_history.md). The trainer, whose ranks share a machine's cores and memory, plans
  // them one at a time.
  RunBoth run_both;
  // Set: plan_first_epochs takes the figures of options it was asked for before from
  // here, and keeps those it plans (settle_batching sets one for its trials).
  std::shared_ptr<TrialFiguresCache> figures;
};

// The first two epochs of `options` (resolved), planned as a run from epoch 0 plans them
// at `trial.world_size` and `trial.seed` (each epoch's deal steered by the one before),
// measured on the lengths as planned: cut to the budget when the plan truncates.
TrialFigures plan_first_epochs(const LengthSource& lengths, const BucketingOptions& options,
                               const CapTrialOptions& trial);

// `resolved` (resolve_automatic's result for `given`) with `cap` for its cap, and the
// noise chosen for that cap as for a caller's cap of that size (the widest that fits
// noise_cap_padding) unless the caller set the noise: what `--max-batch-size cap
// --pairs-target 0` plans with, the pairs target kept.
BucketingOptions with_cap(const LengthSource& lengths, const BucketingOptions& given,
                          const BucketingOptions& resolved, uint64_t cap);

// `resolved` (resolve_automatic's result for `given`, the caller's options) with its
// cap doubled when the trial keeps twice it, and the noise re-chosen for that cap; as
// it is otherwise. The trial is made only where `given.cap_trial` asks for it, the cap
// was chosen below the caller's ceiling by the pairs estimate
// (`given.repeated_pairs_target` > 0), twice it is at most that ceiling, and the corpus
// holds at most kMostTrialSamples.
BucketingOptions trial_batch_cap(const LengthSource& lengths, const BucketingOptions& given,
                                 const BucketingOptions& resolved, const CapTrialOptions& trial);

}  // namespace evenfeed
