// Options of the token-budget planner, each explained; defaults are what we measured
// to meet the targets in BENCHMARKS.md.
#pragma once

#include <cstdint>

#include "bucketing/cost_model.h"
#include "sampler/global_order.h"

namespace evenfeed {

// The padding target of issue 3 (padded slots over all slots): the planner plans a
// window again when it pads more (window_planner.cpp), the automatic sample cap goes
// below its ladder when the noise alone would pad more (automatic_batch_cap), and the
// imbalance bound of `evenfeed plan` is for plans that pad at most this.
inline constexpr double kPaddingTarget = 0.02;

// BucketingOptions::max_batch_size for "no cap" (0 means "choose").
inline constexpr uint64_t kNoBatchCap = UINT64_MAX;

enum class OversizePolicy {
  kError,     // a sample longer than the budget is an error naming it
  kTruncate,  // it is planned as if cut to the budget (the loader cuts it)
};

struct BucketingOptions {
  // Per-rank budget: a batch's cost (CostModel) stays at or under the cost of one
  // sample of this many tokens.
  uint64_t tokens_per_rank = 4096;
  CostModel cost;
  // At most this many samples per batch. 0 chooses it from the data
  // (automatic_batch_cap): no cap, unless batches filled to the budget would batch
  // together again, next epoch, more than 1.25 x `repeated_pairs_target` of the sample
  // pairs they batch together (a budget that admits thousands of short samples per
  // batch, more than a window holds of each length); then the largest power of two
  // from 64 to 65,536 that brings the estimate under it, each estimated with the noise
  // it would be planned with (and on batches not yet dealt); when none does, the one
  // with the least estimate if that is below `least_cap_share` of full batches', or half
  // of it when at 64 even the narrowest noise pads more than kPaddingTarget and at 32
  // it does not.
  // A cap set here is a ceiling: the same choice is made among the caps below it, so a
  // user's cap for memory does not bring back the repeated pairs the automatic cap
  // avoids (`repeated_pairs_target` 0 keeps it exact). kNoBatchCap: no cap.
  uint64_t max_batch_size = 0;
  // Set by resolve_automatic once max_batch_size is the cap to plan with, so options
  // resolved once and passed on are not capped again below their chosen cap.
  bool max_batch_size_resolved = false;
  // Set by resolve_automatic too: no cap's estimate met `repeated_pairs_target`, so the
  // cap chosen is a fallback (AutomaticCap::estimate_met), and the fallback trial may
  // measure other caps and noises (`fallback_trial`).
  bool pairs_estimate_missed = false;
  // The re-batched pair share the automatic cap aims under (0: never cap automatically).
  double repeated_pairs_target = 0.08;
  // Where the cap above was chosen below the ceiling, the caller that plans the run
  // (`evenfeed plan`, the trainer) also tries twice it on the first two epochs, at the
  // run's world size and seed, and keeps the faster plan that meets every target
  // (trial_batch_cap, cap_trial.h); and where the epoch has few full-budget steps and
  // the plan so far misses only balance, also 2, 4 and 8 times the cap and the ceiling,
  // keeping the one that meets every target with the fewest pairs again, or failing
  // that, narrower noises (trial_for_balance, balance_trial.h). false: the estimate's cap,
  // whatever the world size.
  bool cap_trial = true;
  // Where no cap's estimate met the pairs target (the cap chosen is a fallback), the
  // caller that plans the run also plans the first two epochs with the estimate's
  // choice and, when they miss the padding or pairs target, with wider noises and
  // smaller caps, and keeps the first that meets every target (trial_fallback_batches,
  // fallback_trial.h). false: the estimate's choice.
  bool fallback_trial = true;
  // When no cap brings the estimate under the target, the cap with the least estimate
  // is still chosen if that estimate is below this share of full batches' (0: keep
  // full batches then). 0.75: the README's demo corpus needed more than 0.5.
  double least_cap_share = 0.75;
  // At most this many padded tokens per batch, count x longest (0: no bound beyond
  // the budget). Under the linear model the budget already is one at tokens_per_rank.
  // Under the quadratic model the budget bounds compute, and a batch of short samples
  // may hold many times tokens_per_rank tokens; set this to bound memory too.
  uint64_t max_batch_tokens = 0;
  // New samples taken from the global order per planning window. Sorting happens only
  // inside a window, so composition changes every epoch; memory is O(window). 0 picks
  // it from the data: max(65536, 256 x the samples per batch at the median length, under
  // the budget and token bound but not the sample cap), so a window holds many steps'
  // worth of similar lengths whatever the cost model.
  uint64_t window = 0;
  // The noisy sort: a sample may trade places with neighbours up to `noise` batches'
  // worth of samples away, but never across more than `noise_cap` in log length (for a
  // sample at the median's samples per batch; more for shorter ones). Wide for short
  // samples (many per batch, most pairs), zero for samples alone in a batch.
  double noise = 8;
  // 0 chooses it from the data (automatic_noise_cap): the widest of 0.05-0.2 whose
  // noise alone costs at most `noise_cap_padding` in padding. Wider noise re-batches
  // fewer pairs from epoch to epoch; the rest of the 2% padding target is left for the
  // balancing steps, which add padding of their own.
  double noise_cap = 0;
  double noise_cap_padding = 0.012;
  // When no sample cap brings the estimated re-batched pairs under
  // `repeated_pairs_target` with noise that costs at most `noise_cap_padding`, the
  // automatic cap (max_batch_size = 0) tries again with noise costing up to this much:
  // more of the 2% padding target spent on noise, where the pairs target would
  // otherwise be missed.
  double noise_cap_padding_for_pairs = 0.017;
  // When a window's steps pad more than this share of their slots, the window is
  // planned again with half the noise (reach and padding allowance) and the plan that
  // pads less is kept: the noise spends padding for fresh batch mates, and at large
  // budgets a window's cuts alone can take most of the 2% padding target. A window
  // still above 2% then is planned once more with the noise's cap narrowed too
  // (kQuieterNoiseCap). 0: never.
  double padding_guard = 0.019;
  // Every sample that shares a batch may move at least this far (log length), so batch
  // composition changes between epochs for long samples too.
  double noise_floor = 0.015;
  // ... and no sample's noise may cost it more than this fraction of the window's mean
  // length in padding tokens. Tiny samples (a 1-token file, a one-line changelog entry)
  // can then mix with samples many times longer at almost no padding, which is what
  // breaks up the huge batches of short samples that dominate the repeated pairs,
  // while long samples stay in narrow bands.
  double noise_padding = 0.15;
  // Batches whose costs lie within this fraction of a step's most expensive batch
  // share that step; the rest of the step is completed with batches cut to its level
  // from the shortest samples. The epoch's last window, when a step ends above 1.04
  // max/mean, is also planned with the tighter kTighterLevelTolerance (0.05) when this
  // is wider, and the more level plan kept (WindowPlanner::keep_more_level_tighter).
  double level_tolerance = 0.08;
  // In the epoch's last window (of at most 65,536 samples), replace the light batches
  // of a step out of level with batches cut to its level from the other steps'
  // samples, plan those again, and keep the result where it is more level and no
  // longer to run (WindowPlanner::lift_light_batches). false: never (for comparison).
  bool lift_light_batches = true;
  // Deal each window's samples at random among its batches, every batch keeping its
  // count and its longest sample (mix_window): batch costs, padding and balance are
  // unchanged, but batch mates are no longer just neighbours in length, who on a small
  // corpus meet again every epoch. false keeps each batch a run of like lengths.
  bool mix_batches = true;
  // Steer each epoch's deal away from the previous epoch's batch mates (epoch_mates.h):
  // on small corpora the long samples fit few batches and would meet again. Needs the
  // previous epoch's plan, so the planner's caller passes it (EpochMatesChain); up to
  // kMostSamplesRemembered samples. Batch costs, padding and balance are unchanged.
  bool fresh_mates = true;
  OversizePolicy oversize = OversizePolicy::kError;
  OrderOptions order;
};

// The longest a sample is planned at: the budget where oversize samples are cut to it,
// no limit otherwise (TruncatedLengths' cap).
inline uint64_t planned_length_cap(const BucketingOptions& options) {
  return options.oversize == OversizePolicy::kTruncate ? options.tokens_per_rank : UINT64_MAX;
}

}  // namespace evenfeed
