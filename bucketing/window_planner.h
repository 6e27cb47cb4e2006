// Plans one window of the global order into steps of exactly W per-rank batches.
//
// 1. Noisy sort: samples are sorted by log length plus a per-epoch random term (see
//    BucketingOptions::noise), longest first, so batches are homogeneous (little
//    padding) yet differ from epoch to epoch.
// 2. Samples too long for 16 to share a batch ("coarse") are packed greedily into
//    token-budget batches. Their costs are coarse-grained, so they are grouped by cost
//    level: a step takes up to W batches within `level_tolerance` of its most
//    expensive one, and the rest of the step is completed with batches cut to that
//    level from the shortest samples ("fillers"), whose fine granularity can match any
//    level. Groups are completed from the cheapest level up: when fillers run out, the
//    groups left incomplete are the most expensive ones, whose samples are alike
//    (often documents truncated to the budget) and balance among themselves. The last
//    window, when its fillers were too few for its groups, is also planned
//    with groups chosen for the fillers it holds (plan_coarse_runs: runs of the cost
//    order, least out of level in total) and the more level plan kept
//    (keep_more_level_regrouped). The last window whose worst step is above 1.04 is
//    also planned with groups within kTighterLevelTolerance (5%) of their dearest, and
//    the more level plan kept (keep_more_level_tighter): more groups complete with
//    fillers, and the cheap steps a window's end cuts from what is left are fewer.
//    Under a token bound, a whole group of unmatched lumps (samples dearer than any
//    batch of shorter ones) may first take in sparser lumps the window carries in place
//    of its cheapest, up to a level counted for the whole epoch before it is planned
//    (spread_sparse_lumps, lump_census.h).
// 3. Remaining fillers are packed at the full budget; batches sorted by cost form steps
//    W at a time. With a sample cap or token bound, fillers too short to fill the
//    budget at the cap ("capped") are cut apart, shortest first: a step's first batch
//    at the cap, the others cut to its cost, or, when that step would be out of level
//    (longer samples cut in coarse grains), to the level its coarsest batches fit
//    (capped_level). They never complete a coarse group whose level they cannot
//    reach, and are not taken back for a final cut. A window finished (step 4) after
//    such a level was chosen is finished from the plain capped steps too, and the
//    more level end kept: what the capped steps leave over feeds the final cut.
// 4. What does not make a whole step is carried into the next window; in the last
//    window it is cut into exactly W balanced batches per step (taking back planned
//    steps first when it is too light to balance, and the finest-grained ones when
//    more lumps than ranks would leave a nearly empty last step), and the last of
//    those steps is cut again to a level of its own. A final step left with one light
//    batch (a few short samples after mid-length ones, too far apart in length to share
//    a batch) borrows short samples from the finest-grained planned steps, alike from
//    each of their batches, each donor lending while it stays within 1.02 max/mean
//    (lend_to_light.h), when that makes the step more level, while the window's padding
//    stays under 1.8% (a borrowed sample is padded to the light batch's longest).
//    Under a token bound (max_batch_tokens), lumps (samples alone in a batch and dearer
//    than any batch of shorter ones) are placed before the final cut, with the dearest
//    other batches as partners (plan_lump_runs). When the plain end leaves a step
//    above 1.04 max/mean, it is made again in other ways and the most level kept (of
//    ends as level at their worst step, the one more level on average), or one at
//    least 2% quicker and nearly as level (finish_level): under a cap or bound
//    with the samples too short to reach the leftover's dearest sample set aside while
//    steps are taken back; with samples too dear to share a batch placed as lumps; with
//    the lumps' partners cut to measure (plan_fluid_runs) instead of at the budget, in
//    the samples' order or from samples of one length (cut_fluid_pieces); with the
//    window's capped steps, when they are few, rejoining the leftover as partners and
//    fillers (FinishWay::capped_rejoin); with the capped samples left over, too few for
//    steps of their own, cut together with the capped step of the longest samples
//    instead of joining the leftover (FinishWay::capped_merged); under a token bound,
//    with the unmatched lumps that fill whole steps dealt evenly over them
//    (FinishWay::deal_lumps, deal_lumps_evenly) before the rest are placed in runs, kept
//    only where it takes at most kSpreadTimeShare longer. Last, where the best end still
//    has a step above 1.10, its steps of lumps and its dearest other step are planned
//    again together (regroup_dearest): the lumps dealt evenly over their steps, with
//    partners cut first from the samples that would sit awkwardly in the step left over;
//    kept where more level.
// 5. A step still above 1.04 max/mean exchanges whole batches with the window's other
//    steps while that lowers the worst of the two (level_by_swaps): padding and batch
//    mates do not change, only the step a batch runs in. A step left above 1.04 because
//    its dearest batches are fine samples cut too dear then gives the shortest of them
//    to batches of other steps with idle room, at least as long and below their step's
//    dearest (move_to_level, level_by_moves), within the window's padding room (a step
//    that cannot be trimmed, a sample alone or a batch at the cap at its max, is left:
//    filling its light batches from other steps would shorten no step, level_by_moves.h).
//    This runs on every window, carried or last. In a finished window, a step that
//    leaves ranks without a batch (a lump at the epoch's end beside capped samples,
//    which are not taken back) borrows another step's dearest batches for them, the
//    lender cutting the rest of its samples W ways (fill_idle_ranks,
//    window_planner_idle.cpp).
//    A window whose steps now pad more than `padding_guard` (1.9%) is planned again,
//    steps 1-5, with half the noise (reach and padding allowance); the quieter plan is
//    kept when it pads less and its worst step is no less level, or level enough
//    (plan_quietly_if_less_padded). One still above the 2% padding target is planned
//    a third time, with the noise's cap narrowed by a quarter too. Last, with the
//    window's steps chosen, a step whose max/mean is set by a few dear batches hands
//    them to steps whose dearest is dearer, for cheaper ones (shed_and_swap,
//    shed_to_level): it gets shorter and they no longer; the swaps are tried again.
//    Then two steps whose costs overlap take the dearer and the cheaper half of their
//    batches, where the worse of the two is no less level and the two more level
//    together (split_in_cost_order): never longer; the swaps are tried once more.
//    Then, in the epoch's last window (of at most 65,536 samples), the light batches
//    of a step still above 1.03 max/mean trade places with batches cut near its level
//    from the window's other steps' samples, those are planned again, and the whole
//    kept where more level, no longer and no more padded (lift_light_batches).
//    Then a step of next to no work (its dearest batch under 1% of the budget: a few
//    very short samples a rank) is dealt into another step of the window where that
//    keeps the host level (absorb_negligible, absorb_steps.h): one step fewer.
// 6. The window's samples are dealt at random among its batches, each batch keeping
//    its count and its longest sample, so its cost (mix_window, deal_to_places): batch
//    mates are then not just neighbours in length, which on a small corpus are mostly
//    the same ones every epoch. Given the previous epoch's batches (epoch_mates.h), each
//    sample takes, of a few places drawn, one beside the fewest of its former mates.
// 7. The step order is chosen among a few seeded shuffles to keep the lag-1
//    correlation of step mean length near zero.
// Steps 1-3, 6 and 7 live in window_planner.cpp (the capped steps of step 3 in
// window_planner_capped.cpp), step 4 and the padding guard in window_planner_final.cpp
// (the light batch's borrowing in window_planner_borrow.cpp, the lumps' placement in
// window_planner_lumps.cpp, the regroup in window_planner_regroup.cpp), step 5 in
// window_planner_level.cpp (the idle ranks' batches in window_planner_idle.cpp, the
// lifted light batches in window_planner_lift.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/greedy_segments.h"
#include "bucketing/leftover_scan.h"
#include "bucketing/lump_census.h"
#include "bucketing/split_across_windows.h"
#include "sampler/plan.h"

namespace evenfeed {

struct FluidRuns;
struct PieceCut;
class EpochMates;

struct PlanItem {
  uint64_t id = 0;
  uint64_t length = 0;  // already checked against the budget (or truncated to it)
};

class WindowPlanner {
 public:
  // `previous`: the previous epoch's batches, which step 6 steers away from (null:
  // none); must outlive the planner.
  WindowPlanner(const BucketingOptions& options, uint32_t world_size, uint64_t seed, uint32_t epoch,
                const EpochMates* previous = nullptr);
  ~WindowPlanner();
  WindowPlanner(const WindowPlanner&) = delete;
  WindowPlanner& operator=(const WindowPlanner&) = delete;

  // Plans `items` (the carry of the previous window followed by this window's new
  // samples). Appends whole steps to `steps`; items left for the next window go to
  // `carry` (never when `last`). `previous_mean` is the mean sample length of the
  // step served just before, for the step-order choice (negative if none); returns the
  // mean sample length of the last step appended (or `previous_mean`).
  double plan(std::vector<PlanItem> items, bool last, uint64_t window_index, double previous_mean,
              std::vector<CostedStep>& steps, std::vector<PlanItem>& carry) const;

  // How whole groups of unmatched lumps take in sparser ones (lump_census.h); none
  // unless set.
  void set_lump_spread(const LumpSpread& spread) { spread_ = spread; }

  // The padding share (padded slots over all slots) of greedy token-budget batches
  // over `items` in noisy-sort order: what the noise alone costs, for choosing it.
  double noisy_sort_padding(const std::vector<PlanItem>& items) const;

  // `items` in this planner's noisy-sort order (longest first), and the greedy
  // token-budget batch (numbered from 0) of each position of such an order, without
  // balancing: two epochs' orders give an estimate of the repeated pairs, for choosing
  // a sample cap.
  std::vector<PlanItem> noisy_sorted(const std::vector<PlanItem>& items) const;
  std::vector<uint32_t> greedy_batches(const std::vector<PlanItem>& sorted) const;

  // Puts `items` in the order the noisy sort starts from (shortest first, equal
  // lengths in this planner's per-epoch tie order): the noisy sort of items handed over
  // so skips its first sort, which saves time where the same items are sorted with one
  // seed and epoch but many noise widths or caps (automatic_batch_cap).
  void sort_by_length(std::vector<PlanItem>& items) const;

 private:
  struct Entry;
  struct Batch;

  std::vector<Entry> noisy_sort(const std::vector<PlanItem>& items) const;
  // A length's samples per batch, its log, how many places ahead its noise looks, and
  // its width's caps (by the samples per batch, and by the padding allowance).
  struct NoiseReach {
    uint64_t per_batch = 1;
    double log_length = 0;
    size_t ahead = 0;
    double cap = 0, padding_width = 0;
  };
  NoiseReach noise_reach(uint64_t length, double median_per_batch, double padding_allowance) const;
  uint64_t tie_of(uint64_t id) const;
  static bool before_by_length(uint64_t length_a, uint64_t tie_a, uint64_t id_a, uint64_t length_b,
                               uint64_t tie_b, uint64_t id_b);
  uint64_t per_batch(uint64_t length) const;
  bool fits(uint64_t count, uint64_t longest) const;
  double reachable(uint64_t length) const;
  // Whether a sample cap or a token bound can keep batches of short samples from
  // reaching the budget.
  bool bounded() const { return limits_.cap != kNoBatchCap || limits_.token_bound > 0; }
  std::vector<Batch> pack(const std::vector<Entry>& entries) const;
  double full_batch_cost(uint64_t length) const;
  bool reaches_at_cap(const Entry& e, double level) const;
  Batch cut_to_level(std::vector<Entry>& fillers, double level, bool from_shortest = false,
                     size_t* unreachable = nullptr) const;
  size_t skip_unreachable(const std::vector<Entry>& fillers, size_t end, double level) const;
  struct Span;  // the fillers a batch would take, its longest sample and its cost
  Span batch_below(const std::vector<Entry>& fillers, size_t end, double level) const;
  struct Planned;  // a step under construction, with its mean sample length
  struct Work;     // what one window's planning has made so far
  Planned make_step(std::vector<Batch> batches) const;
  void mix_window(std::vector<Planned>& planned, uint64_t window_index) const;
  std::vector<Planned> plan_steps(std::vector<PlanItem> items, bool last,
                                  std::vector<PlanItem>& carry, bool regroup = false) const;
  void plan_quietly_if_less_padded(std::vector<Planned>& planned, double padding, bool last,
                                   std::vector<PlanItem>& carry, size_t carried_before,
                                   double noise_cap_scale) const;
  struct Fill {  // a window's padded slots (count x longest) and the tokens in them
    double slots = 0, tokens = 0;
  };
  static void add_fill(const std::vector<Planned>& steps, Fill& fill);
  static double padding_share(const std::vector<Planned>& planned);
  struct CoarseGroup;  // coarse batches that a step takes, completed with fillers
  bool regroup_for_fillers(const std::vector<Batch>& batches, const std::vector<Entry>& fillers,
                           double reach, bool regroup, std::vector<CoarseGroup>& groups) const;
  void plan_coarse(const std::vector<Entry>& coarse, std::vector<Entry>& fillers, bool regroup,
                   Work& work) const;
  void plan_fillers(std::vector<Entry> fillers, Work& work) const;
  struct CappedFork;  // where plan_capped first chose a level of its own
  std::optional<CappedFork> plan_capped(Work& work, bool choose_levels) const;
  std::vector<Span> capped_step_at(const std::vector<Entry>& capped, double level) const;
  double imbalance(const std::vector<Span>& spans) const;
  double capped_level(const std::vector<Entry>& capped, double first_level) const;
  void cut_apart_or_rejoin(std::vector<Entry> samples, Work& work) const;
  bool few_capped_left(const Work& work) const;
  void merge_with_longest_apart(Work& work) const;
  struct FinishWay;  // how finish() makes a window's end; finish_level tries several
  void finish(Work& work, const FinishWay& way) const;
  std::vector<Planned> finish_level(Work work) const;
  std::vector<FinishWay> other_finish_ways(const Work& work) const;
  // The dearest steps of a finished window planned again together
  // (window_planner_regroup.cpp).
  struct RegroupSplit;
  struct RegroupChoice {  // the levels a regroup cuts at, and its worst step
    double partner_level = 0, awkward_level = 0, leftover_level = 0, worst = 0;
  };
  std::optional<std::vector<Planned>> regroup_dearest(const std::vector<Planned>& steps) const;
  bool holds_lump(const Planned& step) const;
  std::optional<RegroupChoice> best_regroup(const std::vector<Entry>& lumps,
                                            const std::vector<Entry>& rest,
                                            size_t lump_steps) const;
  std::vector<Planned> regroup_as(const std::vector<Entry>& lumps, const std::vector<Entry>& rest,
                                  size_t lump_steps, const RegroupChoice& choice,
                                  std::vector<Entry>& spill) const;
  RegroupSplit split_for(const std::vector<Entry>& rest, size_t slots, double partner_level,
                         double awkward_level, std::vector<double>* partner_costs) const;
  double dealt_worst(std::vector<double> costs, size_t lump_steps) const;
  std::optional<std::vector<Planned>> with_spill_cut(std::vector<Planned> dear,
                                                     const std::vector<Planned>& steps,
                                                     const std::vector<size_t>& others,
                                                     std::vector<Entry> spill) const;
  std::vector<Batch> cut_in_order(const std::vector<Entry>& entries, double level, size_t most,
                                  size_t& next) const;
  size_t cut_spans(const std::vector<Entry>& entries, double level, size_t most,
                   std::vector<Span>* spans) const;
  double least_level_for(const std::vector<Entry>& entries, size_t most) const;
  double least_level_for(const GreedySegments& greedy, size_t most) const;
  std::optional<LeftoverCut> least_leftover_cut(const std::vector<Entry>& entries,
                                                double beat) const;
  std::vector<Planned> deal_evenly(std::vector<Batch> batches, size_t steps) const;
  bool awkward_at(const Entry& e, double level) const;
  struct StepsLevel {
    double worst = 1, mean = 0;  // max/mean of the worst step; mean over steps
  };
  struct EndTried {  // a window's end made one way: how level, how long, how many steps
    StepsLevel level;
    double time = 0;
    size_t steps = 0;
  };
  static bool better_end(const FinishWay& way, const EndTried& end, const EndTried& best,
                         double fastest);
  StepsLevel level_of(const std::vector<Planned>& steps) const;
  static StepsLevel level_of_ratios(const std::vector<double>& ratios);
  void keep_more_level_regrouped(std::vector<Planned>& planned, const StepsLevel& level) const;
  void keep_more_level_tighter(std::vector<Planned>& planned, const StepsLevel& level) const;
  static std::vector<PlanItem> items_of(const std::vector<Planned>& planned,
                                        std::vector<PlanItem> items = {});
  void keep_if_more_level(std::vector<Planned>& planned, const StepsLevel& level,
                          std::vector<Planned> other) const;
  static bool more_level(const StepsLevel& a, const StepsLevel& b);
  static double duration(const std::vector<Planned>& steps);
  static double dearest(const Planned& step);
  static bool quicker_nearly_as_level(double a_time, const StepsLevel& a_level, double b_time,
                                      const StepsLevel& b_level);
  std::vector<Entry> set_aside_unreachable(std::vector<Entry>& leftover) const;
  void take_back_until_levellable(Work& work) const;
  void take_back_until_mass_suffices(Work& work) const;
  void take_back_until_last_step_full(Work& work) const;
  class LightTailBound;  // when a final cut's last step is surely light, without it
  double lump_level() const;
  bool has_unmatched_lumps() const;
  bool is_unmatched_lump(double cost) const;
  std::vector<Planned> deal_lump_steps(std::vector<Entry>& leftover) const;
  void spread_sparse_lumps(std::vector<CoarseGroup>& groups, double filler_reach) const;
  std::vector<Planned> place_lumps(std::vector<Entry>& leftover, const FinishWay& way) const;
  struct LumpPlacement;  // the lumps' runs and the partners that complete them
  std::optional<LumpPlacement> place_runs(const std::vector<Entry>& rest,
                                          const std::vector<double>& lump_costs) const;
  std::optional<LumpPlacement> place_fluid_runs(const std::vector<Entry>& rest,
                                                const std::vector<double>& lump_costs,
                                                const std::optional<PieceCut>& cut) const;
  std::vector<std::vector<size_t>> fluid_pieces_in_order(const std::vector<Entry>& rest,
                                                         const FluidRuns& runs) const;
  bool is_lump(const Entry& e, bool singletons, bool awkward = false) const;
  size_t lump_count(const std::vector<Entry>& entries, bool singletons, bool awkward = false) const;
  void take_back_partners(std::vector<Planned>& planned, std::vector<Entry>& leftover) const;
  std::vector<Batch> segment_at(const std::vector<Entry>& entries, double level) const;
  size_t segment_end(const std::vector<Entry>& entries, size_t begin, size_t to, double level,
                     uint64_t& longest) const;
  GreedySegments segments_of(const std::vector<Entry>& entries) const;
  Batch take_segment(const std::vector<Entry>& entries, size_t& next, double level) const;
  std::vector<Batch> cut_into(const std::vector<Entry>& entries, size_t slots) const;
  double least_cut_level(const std::vector<Entry>& entries, const GreedySegments& greedy,
                         GreedySegments::Run run, size_t slots) const;
  double least_cut_level(const GreedySegments& greedy, GreedySegments::Run run, size_t slots,
                         double total, double largest) const;
  std::vector<Span> cut_spans_at(const std::vector<Entry>& entries, GreedySegments::Run run,
                                 double level, size_t slots, const GreedySegments* greedy) const;
  void split_dearest(const std::vector<Entry>& entries, std::vector<Span>& spans,
                     size_t slots) const;
  static bool by_key(const Entry& a, const Entry& b);
  static void sort_by_key(std::vector<Entry>& entries);
  size_t final_step_count(std::vector<Entry>& entries) const;
  size_t final_step_count(const std::vector<Entry>& sorted, const GreedySegments& greedy) const;
  bool last_final_step_light(std::vector<Entry>& entries) const;
  std::vector<Planned> final_cut(std::vector<Entry> leftover) const;
  std::vector<Planned> cut_final_steps(std::vector<Entry>& sorted) const;
  double imbalance(const std::vector<Batch>& batches) const;
  std::vector<std::vector<Batch>> split_off_light_tail(std::vector<Batch> step) const;
  static double slots(const std::vector<Batch>& batches);
  static double slots(const std::vector<Span>& spans);
  static std::vector<Batch> batches_of(const std::vector<Entry>& entries,
                                       const std::vector<Span>& spans);
  double imbalance(const Planned& step) const;
  static void count_samples(Planned& step);
  bool borrow_for_lightest(std::vector<Planned>& planned, Planned& step, double& room) const;
  double padding_room(std::initializer_list<const std::vector<Planned>*> step_lists,
                      double share) const;
  void level_by_swaps(std::vector<Planned>& steps) const;
  void shed_and_swap(std::vector<Planned>& steps) const;
  using BatchIndexSteps = std::vector<std::vector<size_t>>;
  void exchange_batches(
      std::vector<Planned>& steps,
      const std::function<void(std::span<const double>, BatchIndexSteps&)>& exchange) const;
  void move_to_level(std::vector<Planned>& steps) const;
  void absorb_negligible(std::vector<Planned>& steps) const;
  // The light batches of a last window's steps out of level, cut again from its other
  // steps' samples, which are planned again (window_planner_lift.cpp).
  void lift_light_batches(std::vector<Planned>& planned) const;
  size_t lift_step(Planned& step, std::vector<Entry>& pool) const;
  Batch cut_from_pool(const std::vector<Entry>& pool, double level, double least) const;
  struct SampleTable;  // a window's samples in one list, its batches positions into it
  static SampleTable tabulate(std::vector<Planned>& steps);
  std::vector<Planned> untabulate(const SampleTable& table) const;
  static size_t idle_ranks(const Planned& step);
  static double kth_dearest(const Planned& donor, size_t k);
  std::optional<std::pair<Planned, Planned>> lend_batches(const Planned& step,
                                                          const Planned& donor) const;
  bool fill_idle_ranks(std::vector<Planned>& steps) const;
  void recost(Batch& b) const;
  double emit_in_chosen_order(std::vector<Planned>& planned, uint64_t window_index,
                              double previous_mean, std::vector<CostedStep>& steps) const;

  BucketingOptions options_;
  uint32_t world_size_;
  uint64_t seed_;
  uint32_t epoch_;
  // The cost budget, the sample cap (kNoBatchCap: none) and the token bound (0: none).
  BatchLimits limits_;
  const EpochMates* previous_;
  LumpSpread spread_;
  // The final cuts of the leftovers seen last (final_cut): a cache, so a const planner
  // still fills it; a planner is used by one thread at a time.
  struct FinalCuts;
  std::unique_ptr<FinalCuts> final_cuts_;
};

}  // namespace evenfeed
