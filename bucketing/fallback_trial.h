// Where the pairs estimate fell back, the cap and the noise measured instead.
//
// automatic_batch_cap chooses the sample cap from an estimate of the pairs batched
// together again next epoch, and automatic_noise_cap the noise from its padding alone.
// Where no cap's estimate meets the pairs target, the cap it takes is a fallback (the
// least estimate's, half it, or full batches: AutomaticCap::estimate_met false). That
// happens on small corpora, where each length has few samples, and there the estimate
// of batches not yet dealt is far from what the plan does: Perl sources (2,110 files,
// linear, 8,192 tokens, 8 ranks) estimated 23% of pairs again with full batches; the
// plan re-batched 11.1% with noise 0.05 at 1.36% padding, and 6.5% at 1.82% with noise
// 0.1. On such corpora caps below the estimate's ladder (which stops at 64) meet the
// padding and pairs targets together where no noise does: the same Perl sources,
// quadratic, 4,096 tokens, 8 ranks, pad 1.74% and re-batch 14.2% with full batches; at
// most 16 a batch, 1.15% and 6.1%. A batch of fewer short samples spans fewer lengths
// and holds fewer pairs, and the deal has more batches to part former mates among.
//
// So where the cap is a fallback, the trial plans the run's first two epochs (at its
// world size and seed) with the estimate's choice and, when that plan misses the
// padding or the pairs target but meets the balance and lag-1 ones (the mean by
// kBalanceMarginMean; neither the cap nor the noise much mends balance), plans in turn:
//   1. each wider noise of kNoiseCaps at the estimate's cap;
//   2. each smaller cap, from half the estimate's or 64, whichever is smaller, halving
//      down to kSmallestTrialCap, with the noise chosen for it (with_cap), then with
//      each wider noise;
// and keeps the first that meets every target with at most the estimate's own target
// of pairs again (could_win: a margin for the epochs not planned). A plan that meets
// every target is never replaced, nor one whose miss is its balance; with no winner the
// estimate's choice stands. A noise the caller set is kept (only caps are tried), and
// a cap the caller set is a ceiling, as for the estimate.
//
// Each candidate is one more plan of two epochs, so the trial plans at most
// kMostFallbackSamplePlans / samples of them (and is not made past kMostTrialSamples):
// on the sweeps' small corpora (1,152-20,000 samples) a search that finds nothing takes
// 11-20 plans, well under a second each (2.5 s in all at most, BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <optional>

#include "bucketing/bucketing_options.h"
#include "bucketing/cap_trial.h"
#include "bucketing/length_source.h"

namespace evenfeed {

inline constexpr uint64_t kSmallestTrialCap = 16;
inline constexpr uint64_t kMostFallbackSamplePlans = uint64_t{1} << 23;

// A trial's allowance of plans of the first two epochs (plan_first_epochs), counted as
// they are made: the fallback and balance trials each plan at most
// kMostFallbackSamplePlans / samples of them.
class TrialPlans {
 public:
  TrialPlans(const LengthSource& lengths, const CapTrialOptions& trial, uint64_t allowed)
      : lengths_(lengths), trial_(trial), left_(allowed) {}
  uint64_t left() const { return left_; }
  // The figures of `options`' plan, while the allowance lasts; none after.
  std::optional<TrialFigures> measure(const BucketingOptions& options) {
    if (left_ == 0) return std::nullopt;
    --left_;
    return plan_first_epochs(lengths_, options, trial_);
  }

 private:
  const LengthSource& lengths_;
  const CapTrialOptions& trial_;
  uint64_t left_;
};

// How far inside the imbalance mean target the estimate's plan must be for the trial
// to search past it. Smaller batches and wider noise level steps less well (in the
// sweeps' winners the mean rose by up to 0.017), so a plan at the edge of the mean
// target has candidates that miss it, and planning them all costs most there (5,000
// synthetic samples, quadratic, 64 ranks, 4,096 tokens, mean 1.028: 0.23 s without the
// trial, 10.7 s searching, nothing found). No margin on p99: a winner at another seed
// came from a plan at 1.088 (`synthetic:10000`, quadratic, 8 ranks, 16,384 tokens).
inline constexpr double kBalanceMarginMean = 0.005;

// Whether the estimate's plan, measured as `f`, is one the trial searches past: it
// misses the padding or the pairs target, meets the imbalance mean target by
// kBalanceMarginMean, and meets the p99 and lag-1 targets.
bool worth_a_fallback_search(const TrialFigures& f);

// `settled` (trial_batch_cap's result for `given`, the caller's options) or the first
// candidate above that wins. Made only where `given.fallback_trial` asks for it, the
// pairs target is set, `settled.pairs_estimate_missed`, and the corpus holds at most
// kMostTrialSamples.
BucketingOptions trial_fallback_batches(const LengthSource& lengths, const BucketingOptions& given,
                                        const BucketingOptions& settled,
                                        const CapTrialOptions& trial);

}  // namespace evenfeed
