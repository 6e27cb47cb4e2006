// The length-bucketing planner: an epoch as a stream of steps, each with exactly one
// token-budget batch per rank of near-equal cost, every sample exactly once, nothing
// dropped. It walks the epoch's global order in windows (WindowPlanner), holding
// O(window) state: one window's steps are held back until the next window is planned,
// so that the two windows' steps can be split in cost order together
// (split_across_windows.h). It resumes from a PlanState at the same or another world
// size: the served steps are replayed (cheap, deterministic), and at a world-size
// change the unserved steps, held ones too, dissolve back into the carry and are
// re-planned.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/epoch_mates.h"
#include "bucketing/length_source.h"
#include "bucketing/lump_census.h"
#include "bucketing/window_planner.h"
#include "sampler/global_order.h"
#include "sampler/plan.h"

namespace evenfeed {

// Bumped whenever the token-budget plan for the same lengths, options and state
// changes (a resumed run replays its served steps, so a checkpoint planned by another
// revision must not be resumed): 2 since the automatic sample cap and the borrowing
// limit of 2026-12-01, 3 since batches are dealt (mix_window) that evening, 4 since a
// capped window's end is made two ways and the more level kept (finish_level,
// 2026-12-02), 5 since a window's end far from level is also made with singletons
// placed as lumps and partners cut to measure, and the automatic cap falls back to the
// least estimate (after 3dc0936), 6 since partners cut to measure are also cut by
// cut_fluid_pieces (after a76a20e), 7 since a step left far from level gives single
// samples to idle room in the window's other steps (level_by_moves, after 90648a3), 8
// since such a step's light batches may also take samples from level steps (5e1d005), 9
// since a window that pads more than BucketingOptions::padding_guard is planned again
// with half the noise (after 6743fa1), 10 since each epoch's deal steers away from the
// previous epoch's batch mates (BucketingOptions::fresh_mates, after 1897bba), 11 since
// a window's end may be made less level on average for a more level worst step
// (kMeanPerWorstGained, after e1351bd), 12 since batches are exchanged between steps
// until every step is within 1.02 (kSwapUntil, after b27fd48), 13 since a capped step
// out of level tries the levels its coarsest batches fit exactly (capped_level, after
// 3c25a5b), 14 since a sample cap the caller sets is a ceiling for the automatic one
// (BucketingOptions::max_batch_size, after 8236d0e), 15 since an epoch's last window
// short of fillers is also planned with coarse groups chosen for them
// (plan_coarse_runs, after ff238ba), 16 since a step with idle ranks borrows batches
// from another step (fill_idle_ranks) and a window's end is also made with its few
// capped steps rejoining the last cut (FinishWay::capped_rejoin, after 2f0d824), 17
// since a window's end is also made with the lumps' partners cut to measure going on
// to their targets rather than stopping near them (kPieceCuts, after d35b90b), 18
// since the steered deal is followed by swaps that part former mates it left together
// (DealSteer::swap_apart, after e1ac4a2), 19 since a window still above 2% padding
// after its quieter plan is planned once more with a narrower noise cap (after
// 8603c4d), 20 since the automatic sample cap may be 32 where even the narrowest noise
// pads more than 2% at 64 but not at 32 (after e902e06), 21 since a step that cannot be
// trimmed is no longer filled from other steps' batches (revision 8's fill, which
// shortened no step: level_by_moves.h; after a6e1466), 22 since `evenfeed plan` and the
// trainer try twice the automatic sample cap on the first two epochs and keep it where
// it plans faster within every target (BucketingOptions::cap_trial, cap_trial.h; after
// e27824c), 23 since a window's end is also made with the awkward band (samples that
// make batches of at most two, under 0.95 of the budget) placed as lumps, kept where it
// is more level, as quick as any end tried and no more steps
// (FinishWay::awkward_as_lumps, after 39bcc5b), 24 since a window's end that is not
// more level is kept still where it is at least 2% quicker and nearly as level
// (finish_level's kQuickerShare, after 47e7e98), 25 since a window's end is also made
// with the capped samples left over, too few for steps of their own, cut together with
// the capped step of the longest samples (FinishWay::capped_merged; after 227bcee), 26
// since of two window ends whose worst steps are equally level, the one more level on
// average is kept (WindowPlanner::more_level), 27 since under a token bound the
// epoch's unmatched lumps are counted before it is planned and whole steps of them take
// in the sparse ones as they come, where runs would leave a step of those above 1.10
// (lump_census.h, WindowPlanner::spread_sparse_lumps; after 20916b0), 28 since a
// window's end under a token bound is also made with the unmatched lumps that fill
// whole steps dealt evenly over them (FinishWay::deal_lumps, after 02eaea4), 29 since a
// window's step whose few dearest batches set its max/mean hands them to steps that
// are longer anyway, for cheaper ones, once the window's steps are chosen
// (shed_to_level.h, WindowPlanner::shed_and_swap), 30 since after the shed two of a
// window's steps whose costs overlap are split again in cost order where that levels
// them (split_in_cost_order.h; after b7eae60), 31 since each window's steps are held
// back until the next window is planned, and the two windows' steps split in cost
// order together (split_across_windows.h), 32 since a window's step of next to no work
// is dealt into another of its steps where that keeps it level (absorb_steps.h), 33
// since the lumps' partners cut to measure keep the noisy sort's order
// (WindowPlanner::place_fluid_runs), 34 since negligible steps are absorbed while the
// window pads up to its padding guard, not 1.8%, 35 since the epoch's last window, when
// a step ends above 1.04 max/mean, is planned again with coarse groups within 5% of
// their dearest batch and the more level plan kept (keep_more_level_tighter), 36 since
// a window's best end whose worst step is above 1.10 has its steps of lumps and its
// dearest other step planned again together, kept where more level
// (WindowPlanner::regroup_dearest), 37 since a final step's split into two is weighed at
// no more than 64 of its batch boundaries (plans at more than 65 ranks can differ;
// kMostSplitsWeighed), 38 since a final step's light batch borrows from up to eight
// planned steps, each lending while it stays within 1.02 max/mean and keeping each
// batch's longest sample (lend_to_light.h), 39 since the epoch's last window (of at most
// 65,536 samples) lifts the light batches of its steps above 1.03 max/mean with batches
// cut from its other steps' samples, which are planned again, kept where more level and
// no longer (WindowPlanner::lift_light_batches).
inline constexpr int kTokenBudgetPlanRevision = 39;

// The window BucketingOptions::window = 0 stands for, for these lengths and options.
uint64_t automatic_window(const LengthSource& lengths, const BucketingOptions& options);

// The noise caps BucketingOptions::noise_cap = 0 chooses from, narrowest first.
inline constexpr double kNoiseCaps[] = {0.05, 0.07, 0.1, 0.14, 0.2};
// The noise cap BucketingOptions::noise_cap = 0 stands for: the widest of kNoiseCaps
// whose noisy sort alone (greedy batches over a window's worth of evenly spaced
// samples) costs at most options.noise_cap_padding in padding, or the narrowest.
double automatic_noise_cap(const LengthSource& lengths, const BucketingOptions& options);

// The sample caps BucketingOptions::max_batch_size = 0 chooses from, largest first.
inline constexpr uint64_t kBatchCaps[] = {65536, 32768, 16384, 8192, 4096, 2048,
                                          1024,  512,   256,   128,  64};
// At most this many evenly spaced samples estimate the repeated pairs (a sort of a
// million lengths takes about 0.2 s; a larger window's estimate, from fewer samples of
// each length, errs towards a smaller cap).
inline constexpr uint64_t kMostPairProbes = uint64_t{1} << 21;
// The share of the sample pairs sharing a greedy batch (packed by `planner`) in the
// order `first` that share one in the order `second`: the same items, ids 0..n-1.
double greedy_repeated_pair_share(const WindowPlanner& planner, const std::vector<PlanItem>& first,
                                  const std::vector<PlanItem>& second);
// The sample cap to plan with, and the noise cap to plan with (options.noise_cap, or
// when that is 0 the one chosen for this cap). The ceiling is options.max_batch_size, or
// no cap when that is 0. The ceiling when greedy batches filled to the budget (and the
// ceiling) over a window's worth of evenly spaced samples re-batch at most 1.25 x
// options.repeated_pairs_target of their pairs (or when no cap brings them under the
// target); otherwise the largest of kBatchCaps below the ceiling that does.
// Each cap is estimated with the noise it would be planned with (the widest that fits
// the noise's padding target with that cap), from two noisy sorts per noise tried.
// When the cap with the least estimate is the ladder's smallest and even the narrowest
// noise pads more than kPaddingTarget with it, but not with half of it, the cap is
// halved (32).
// `estimate_met`: whether the estimate of that cap (full batches' within 1.25 x the
// target) meets options.repeated_pairs_target; false where the cap is a fallback (the
// least estimate's, half it, or full batches). trial_fallback_batches
// (fallback_trial.h) measures other caps and noises only then.
struct AutomaticCap {
  uint64_t max_batch_size;
  double noise_cap;
  bool estimate_met = true;
};
AutomaticCap automatic_batch_cap(const LengthSource& lengths, const BucketingOptions& options);

// `options` with window = 0 and noise_cap = 0 replaced by what they stand for with
// these lengths, and max_batch_size by the cap chosen under it (max_batch_size_resolved
// then set, so resolving again changes nothing). Choosing the cap and the noise sorts a
// window's worth of lengths up to seven times (about a second and a half for a million
// samples), so a caller that makes a planner per epoch resolves once and passes the
// result; the planner resolves what is still unresolved itself.
BucketingOptions resolve_automatic(const LengthSource& lengths, BucketingOptions options);

class TokenBudgetPlanner : public StepPlanner {
 public:
  // Throws Error for a world size of 0, an empty dataset, a zero length, a sample
  // longer than the budget (unless options.oversize is kTruncate) or a state that does
  // not fit this epoch.
  // `previous`: the previous epoch's batches, which the deal steers away from
  // (EpochMatesChain::previous with the world size this epoch started at; null: none).
  TokenBudgetPlanner(const LengthSource& lengths, const BucketingOptions& options,
                     uint32_t world_size, const PlanState& state,
                     std::shared_ptr<const EpochMates> previous = nullptr);

  bool next(PlanStep& step) override;

 private:
  bool refill();
  void hold_back(std::vector<CostedStep> steps, bool last);
  void switch_world_size(uint32_t world_size);
  PlanItem item(uint64_t id) const;

  const LengthSource& lengths_;
  BucketingOptions options_;
  uint64_t seed_;
  uint32_t epoch_;
  std::unique_ptr<GlobalOrder> order_;
  uint64_t windows_ = 1;
  uint64_t window_index_ = 0;
  uint64_t position_ = 0;  // next global-order position to read
  std::vector<PlanItem> carry_;
  std::deque<StepBatches> pending_;
  // The last window's steps, held back until the next window is planned, to be split
  // with its steps (split_across_windows.h); none once the epoch's last is planned.
  std::vector<CostedStep> held_;
  uint32_t world_size_ = 0;
  std::unique_ptr<WindowPlanner> planner_;
  std::shared_ptr<const EpochMates> previous_;
  LumpCensus census_;  // the epoch's unmatched lumps (lump_census.h)
  uint64_t step_ = 0;
  double last_mean_ = -1;
};

}  // namespace evenfeed
