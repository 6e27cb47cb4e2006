#include "bucketing/token_budget_planner.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "bucketing/split_across_windows.h"
#include "core/error.h"

namespace evenfeed {

uint64_t automatic_window(const LengthSource& lengths, const BucketingOptions& options) {
  // The median over evenly spaced ids: independent of seed, epoch and world size, so
  // every rank and every resume sees the same windows.
  const uint64_t n = lengths.size(), probes = std::min<uint64_t>(n, 4096);
  std::vector<uint64_t> sample;
  for (uint64_t k = 0; k < probes; ++k) {
    sample.push_back(std::min(lengths.length(k * n / probes), options.tokens_per_rank));
  }
  std::nth_element(sample.begin(), sample.begin() + static_cast<long>(sample.size() / 2),
                   sample.end());
  const uint64_t median = std::max<uint64_t>(1, sample[sample.size() / 2]);
  uint64_t per_batch = static_cast<uint64_t>(options.cost.budget(options.tokens_per_rank) /
                                             options.cost.per_sample(median));
  if (options.max_batch_tokens > 0)
    per_batch = std::min(per_batch, options.max_batch_tokens / median);
  // Not the sample cap: it makes batches of short samples smaller, but the long tail's
  // batches, which the cap does not touch, still need a window dense in their lengths.
  // (At a cap of 64 or 512 the smaller window padded 1.0-2.8% where this pads
  // 0.2-0.9%; a token bound is left in, as the larger window cost two p99 targets.)
  return std::max<uint64_t>(65536, 256 * std::max<uint64_t>(1, per_batch));
}

// Evenly spaced ids, a window's worth (at most kMostProbes), with their lengths cut to
// the budget: independent of seed, epoch and world size.
static std::vector<PlanItem> probe_window(const LengthSource& lengths,
                                          const BucketingOptions& options, uint64_t most) {
  const uint64_t n = lengths.size(), probes = std::min({n, options.window, most});
  std::vector<PlanItem> items(probes);
  for (uint64_t k = 0; k < probes; ++k) {
    const uint64_t id = k * n / probes;
    items[k] = {id, std::clamp<uint64_t>(lengths.length(id), 1, options.tokens_per_rank)};
  }
  return items;
}

// The index in kNoiseCaps of the widest cap from `lowest` up whose noisy sort of `items`
// (greedy batches under `options`, its sample cap included) costs at most `padding`;
// `lowest`, untried, when no wider one fits.
static size_t widest_fitting_noise(const std::vector<PlanItem>& items, BucketingOptions options,
                                   size_t lowest, double padding) {
  auto fits = [&](size_t k) {
    options.noise_cap = kNoiseCaps[k];
    return WindowPlanner(options, 1, 0, 0).noisy_sort_padding(items) <= padding;
  };
  // Padding grows with the noise: bisect.
  size_t lo = lowest, hi = std::size(kNoiseCaps) - 1;
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

double automatic_noise_cap(const LengthSource& lengths, const BucketingOptions& options) {
  // A window's worth of evenly spaced ids (like automatic_window, independent of seed,
  // epoch and world size), sorted with each candidate noise and packed greedily.
  BucketingOptions o = options;
  if (o.window == 0) o.window = automatic_window(lengths, options);
  std::vector<PlanItem> items = probe_window(lengths, o, UINT64_MAX);
  WindowPlanner(o, 1, 0, 0).sort_by_length(items);  // once for every noise tried
  return kNoiseCaps[widest_fitting_noise(items, o, 0, o.noise_cap_padding)];
}

// The share of the sample pairs that share a greedy batch in the first order that
// share one in the second. `first` and `second` hold the same items, whose ids are
// 0..n-1, in two epochs' noisy-sort orders; `planner` packs them (its cap applies).
double greedy_repeated_pair_share(const WindowPlanner& planner, const std::vector<PlanItem>& first,
                                  const std::vector<PlanItem>& second) {
  const std::vector<uint32_t> batches_first = planner.greedy_batches(first);
  const std::vector<uint32_t> batches_second = planner.greedy_batches(second);
  std::vector<uint32_t> second_batch_of(second.size());
  for (size_t k = 0; k < second.size(); ++k) second_batch_of[second[k].id] = batches_second[k];
  auto pairs = [](size_t count) { return 0.5 * static_cast<double>(count) * (count - 1.0); };
  double together = 0, again = 0;
  std::vector<uint32_t> mates;  // one first-order batch's second-order batches
  for (size_t k = 0; k < first.size();) {
    size_t end = k;
    mates.clear();
    for (; end < first.size() && batches_first[end] == batches_first[k]; ++end)
      mates.push_back(second_batch_of[first[end].id]);
    together += pairs(mates.size());
    std::sort(mates.begin(), mates.end());
    for (size_t j = 0, run = 0; j < mates.size(); j = run) {
      for (run = j; run < mates.size() && mates[run] == mates[j]; ++run) {
      }
      again += pairs(run - j);
    }
    k = end;
  }
  return together > 0 ? again / together : 0.0;
}

// `least`: the cap with the least estimate, the ladder's smallest (64), which
// automatic_batch_cap is about to take though no cap met the pairs target. On a small
// corpus each length has few samples, so 64 neighbours in length span a wide range of
// lengths, and even the narrowest noise may sort a window into batches at that cap that
// pad more than the whole padding target. The plan then pads over it, or its padding
// guard takes noise back to stay under, and more pairs meet again. Half as many
// neighbours span about half the range: the cap is halved when that brings the
// narrowest noise under the target, and planned with the widest noise that fits the
// padding allowance for pairs (or the narrowest). Otherwise `least` stands: where
// halving does not fit either, the greedy batches' padding is far from what the plan
// pads (2-8% in the planner's tests, whose plans pad under 2%). Source files,
// quadratic, 32,768 tokens, 8 ranks: greedy 2.3% at 64 and 1.9% at 32; planned, 2.12%
// padding and 9.3% of pairs again at 64, 1.81% and 5.6% at 32. Log-normal documents
// (docs/plan_history.md): 1.91% and 14.5% at 64, 1.75% and 6.5% at 32.
static AutomaticCap halved_if_noise_overpads(const std::vector<PlanItem>& noise_items,
                                             BucketingOptions o, const AutomaticCap& least) {
  o.noise_cap = kNoiseCaps[0];
  auto overpads = [&](uint64_t cap) {
    o.max_batch_size = cap;
    return WindowPlanner(o, 1, 0, 0).noisy_sort_padding(noise_items) > kPaddingTarget;
  };
  const uint64_t half = least.max_batch_size / 2;
  if (!overpads(least.max_batch_size) || overpads(half)) return least;
  return {half, kNoiseCaps[widest_fitting_noise(noise_items, o, 0, o.noise_cap_padding_for_pairs)],
          false};
}

// Full batches are capped only when their estimate exceeds the target this many times.
static constexpr double kCapTrigger = 1.25;

namespace {

// The estimate behind the automatic cap: the share of pairs that two epochs' greedy
// batches over a probe of the lengths put together again, for a cap and, when the noise
// is left to choose, the widest noise that fits a padding allowance.
class PairShareProbe {
 public:
  PairShareProbe(const LengthSource& lengths, const BucketingOptions& options) : o_(options) {
    if (o_.window == 0) o_.window = automatic_window(lengths, options);
    // With the noise left to choose, each cap is estimated with the noise it would be
    // planned with: a cap makes batches of short samples span fewer lengths, so wider
    // noise fits the padding target, and that noise re-batches fewer pairs (Debian
    // changelog entries, quadratic, capped at 64: noise 0.2 where full batches take 0.05,
    // 8.1% of pairs again where full batches' noise estimated 10.8%).
    choose_noise_ = o_.noise_cap == 0;
    // Both lists are sorted by length once, in the order the first epoch's noisy sorts
    // start from, which they then skip (the second epoch's tie order differs).
    if (choose_noise_) noise_items_ = probe_window(lengths, o_, UINT64_MAX);
    WindowPlanner(o_, 1, 0, 0).sort_by_length(noise_items_);
    items_ = probe_window(lengths, o_, kMostPairProbes);
    for (size_t k = 0; k < items_.size(); ++k) items_[k].id = k;  // dense, to index by
    WindowPlanner(o_, 1, 0, 0).sort_by_length(items_);
    // Two samples batched together meet in one window next epoch only by chance: the
    // global order is reshuffled, so with probability about window / dataset.
    same_window_ =
        std::min(1.0, static_cast<double>(o_.window) / static_cast<double>(lengths.size()));
  }

  // The estimate at `cap`; with the noise left to choose, at the widest noise whose
  // padding fits `noise_padding`, never narrower than the last one since restart(): a
  // smaller cap never narrows the noise that fits.
  double at(uint64_t cap, double noise_padding) {
    o_.max_batch_size = cap;
    if (choose_noise_) {
      noise_ = widest_fitting_noise(noise_items_, o_, noise_, noise_padding);
      o_.noise_cap = kNoiseCaps[noise_];
    }
    // Both epochs sorted with the reach of full batches (a cap narrows the reach of the
    // samples it caps, which this estimate leaves out), once for each noise.
    if (o_.noise_cap != sorted_noise_) {
      BucketingOptions full = o_;
      full.max_batch_size = kNoBatchCap;
      first_ = WindowPlanner(full, 1, 0, 0).noisy_sorted(items_);
      second_ = WindowPlanner(full, 1, 0, 1).noisy_sorted(items_);
      sorted_noise_ = o_.noise_cap;
    }
    return same_window_ * greedy_repeated_pair_share(WindowPlanner(o_, 1, 0, 0), first_, second_);
  }

  void restart() { noise_ = 0; }
  bool chooses_noise() const { return choose_noise_; }
  double noise_cap() const { return o_.noise_cap; }
  // The options as last estimated, and the lengths the noise is fitted to.
  const BucketingOptions& options() const { return o_; }
  const std::vector<PlanItem>& noise_items() const { return noise_items_; }

 private:
  BucketingOptions o_;
  bool choose_noise_ = false;
  std::vector<PlanItem> noise_items_, items_;
  double same_window_ = 1;
  size_t noise_ = 0;
  double sorted_noise_ = -1;
  std::vector<PlanItem> first_, second_;
};

// What walks over the caps have found: full batches (with the first walk's noise),
// the cap with the least estimate, and full batches' estimate in the last walk.
struct CapWalks {
  std::optional<AutomaticCap> full, least;
  double least_share = 2, full_share = 0;
};

// The largest cap (none first, `ceiling`) whose estimate meets `target` with noise
// costing at most `noise_padding`. Full batches near the target are left alone: a cap
// changes how the shortest samples are cut, and there it re-batched more pairs, not
// fewer (8.2% -> 9.2% on Debian changelog entries, linear cost).
std::optional<AutomaticCap> largest_meeting(PairShareProbe& probe, uint64_t ceiling, double target,
                                            double noise_padding, CapWalks& walks) {
  probe.restart();
  walks.full_share = probe.at(ceiling, noise_padding);
  if (!walks.full) walks.full = AutomaticCap{ceiling, probe.noise_cap(), false};
  if (walks.full_share <= kCapTrigger * target) return AutomaticCap{ceiling, probe.noise_cap()};
  for (uint64_t cap : kBatchCaps) {
    if (cap >= ceiling) continue;
    const double capped = probe.at(cap, noise_padding);
    if (capped <= target) return AutomaticCap{cap, probe.noise_cap()};
    if (capped < walks.least_share) {
      walks.least_share = capped;
      walks.least = AutomaticCap{cap, probe.noise_cap(), false};
    }
  }
  return std::nullopt;
}

}  // namespace

AutomaticCap automatic_batch_cap(const LengthSource& lengths, const BucketingOptions& options) {
  // The caller's cap, if any, is the largest tried ("full" batches below).
  const uint64_t ceiling = options.max_batch_size > 0 ? options.max_batch_size : kNoBatchCap;
  if (options.repeated_pairs_target <= 0) {
    const double noise_cap =
        options.noise_cap == 0 ? automatic_noise_cap(lengths, options) : options.noise_cap;
    return {ceiling, noise_cap};
  }
  const double target = options.repeated_pairs_target;
  PairShareProbe probe(lengths, options);
  CapWalks walks;
  if (auto chosen = largest_meeting(probe, ceiling, target, options.noise_cap_padding, walks))
    return *chosen;
  // No cap meets it with the noise's own padding target: spend more of the padding
  // target on noise before giving up on the pairs one (source files, quadratic, 8,192
  // tokens: cap 128 with noise 0.2, 1.62% padding and 8.8% of pairs again, where full
  // batches with noise 0.05 padded 1.35% and re-batched 15.8%).
  if (probe.chooses_noise() && options.noise_cap_padding_for_pairs > options.noise_cap_padding) {
    if (auto chosen =
            largest_meeting(probe, ceiling, target, options.noise_cap_padding_for_pairs, walks))
      return *chosen;
  }
  // No cap meets it. The cap with the least estimate is still taken when it re-batches
  // less than `least_cap_share` of what full batches would: the estimate is of undealt
  // batches, and dealing them re-batches fewer pairs; and on small corpora at large
  // budgets full batches hold most of a length's samples, so they pad and re-batch far
  // more (Debian changelog entries, quadratic, 32,768 tokens, 8 ranks: 7.94% padding
  // and 66.2% of pairs again with full batches; 1.64% and 7.8% with cap 64, estimated
  // 11.8% against 90.2%). Otherwise full batches: a cap would only add steps.
  if (walks.least && walks.least_share < options.least_cap_share * walks.full_share) {
    if (probe.chooses_noise() && walks.least->max_batch_size == std::end(kBatchCaps)[-1])
      return halved_if_noise_overpads(probe.noise_items(), probe.options(), *walks.least);
    return *walks.least;
  }
  return *walks.full;
}

BucketingOptions resolve_automatic(const LengthSource& lengths, BucketingOptions options) {
  if (options.window == 0) options.window = automatic_window(lengths, options);
  if (!options.max_batch_size_resolved) {
    const AutomaticCap chosen = automatic_batch_cap(lengths, options);
    options.max_batch_size = chosen.max_batch_size;
    options.noise_cap = chosen.noise_cap;
    options.max_batch_size_resolved = true;
    options.pairs_estimate_missed = !chosen.estimate_met;
  }
  if (options.noise_cap == 0) options.noise_cap = automatic_noise_cap(lengths, options);
  return options;
}

TokenBudgetPlanner::TokenBudgetPlanner(const LengthSource& lengths, const BucketingOptions& options,
                                       uint32_t world_size, const PlanState& state,
                                       std::shared_ptr<const EpochMates> previous)
    : lengths_(lengths), seed_(state.seed), epoch_(state.epoch), previous_(std::move(previous)) {
  check_world(world_size, lengths.size());
  EVENFEED_CHECK(options.tokens_per_rank > 0, "tokens per rank must be at least 1");
  EVENFEED_CHECK(
      options.max_batch_tokens == 0 || options.max_batch_tokens >= options.tokens_per_rank,
      "max batch tokens {} is below the per-rank budget of {} tokens, so a sample of "
      "the budget's length could not fit; raise --max-batch-tokens or leave it 0",
      options.max_batch_tokens, options.tokens_per_rank);
  const uint64_t n = lengths.size();
  options_ = resolve_automatic(lengths, options);
  census_ = take_lump_census(lengths, options_);
  order_ = make_global_order(options.order, n, seed_, epoch_);
  windows_ = std::max<uint64_t>(1, (n + options_.window - 1) / options_.window);
  for (const Segment& s : state.served) {
    EVENFEED_CHECK(s.world_size > 0, "sampler state holds a segment with world size 0");
    switch_world_size(s.world_size);
    PlanStep skipped;
    for (uint64_t k = 0; k < s.steps; ++k) {
      EVENFEED_CHECK(
          next(skipped),
          "sampler state says {} steps were served at world size {} in epoch {}, but the epoch "
          "ended after {}; the state does not belong to this dataset or these options",
          s.steps, s.world_size, epoch_, k);
    }
  }
  switch_world_size(world_size);
}

PlanItem TokenBudgetPlanner::item(uint64_t id) const {
  uint64_t length = lengths_.length(id);
  EVENFEED_CHECK(length > 0, "sample {} has length 0; every sample needs at least one token", id);
  if (length > options_.tokens_per_rank) {
    EVENFEED_CHECK(
        options_.oversize == OversizePolicy::kTruncate,
        "sample {} has length {}, more than the per-rank budget of {} tokens; raise "
        "--tokens-per-rank or pass --oversize truncate to cut such samples to the budget",
        id, length, options_.tokens_per_rank);
    length = options_.tokens_per_rank;
  }
  return {id, length};
}

void TokenBudgetPlanner::switch_world_size(uint32_t world_size) {
  if (planner_ && world_size == world_size_) return;
  // Steps planned for the old world size but not served, held back ones too, go back
  // to be re-planned.
  auto dissolve = [this](const StepBatches& step) {
    for (const RankBatch& batch : step) {
      for (uint64_t id : batch.samples) carry_.push_back(item(id));
    }
  };
  for (const StepBatches& step : pending_) dissolve(step);
  for (const CostedStep& step : held_) dissolve(step.ranks);
  pending_.clear();
  held_.clear();
  world_size_ = world_size;
  planner_ = std::make_unique<WindowPlanner>(options_, world_size, seed_, epoch_, previous_.get());
  planner_->set_lump_spread(plan_lump_spread(census_, options_.cost, world_size));
}

bool TokenBudgetPlanner::refill() {
  const uint64_t n = order_->size();
  while (pending_.empty()) {
    if (position_ >= n && carry_.empty()) {
      // The epoch's last window queued the held steps with its own (hold_back).
      EVENFEED_CHECK(held_.empty(), "{} steps held back at the end of epoch {} were never served",
                     held_.size(), epoch_);
      return false;
    }
    std::vector<PlanItem> items = std::move(carry_);
    carry_.clear();
    // Windows of (nearly) equal size, so the last one is not a runt.
    const uint64_t end =
        window_index_ + 1 >= windows_
            ? n
            : static_cast<uint64_t>(static_cast<__uint128_t>(window_index_ + 1) * n / windows_);
    items.reserve(items.size() + (end - position_));
    for (; position_ < end; ++position_) items.push_back(item(order_->at(position_)));
    const bool last = position_ >= n;
    std::vector<CostedStep> steps;
    last_mean_ = planner_->plan(std::move(items), last, window_index_++, last_mean_, steps, carry_);
    hold_back(std::move(steps), last);
  }
  return true;
}

// The held window's steps are split with the new window's (split_across_windows) and
// queued to be served; the new window's are held in turn, unless they are the epoch's
// last. A window that made no step leaves the held ones waiting for the next.
void TokenBudgetPlanner::hold_back(std::vector<CostedStep> steps, bool last) {
  if (steps.empty() && !last) return;
  split_across_windows(held_, steps);
  for (CostedStep& s : held_) pending_.push_back(std::move(s.ranks));
  held_.clear();
  if (last) {
    for (CostedStep& s : steps) pending_.push_back(std::move(s.ranks));
  } else {
    held_ = std::move(steps);
  }
}

bool TokenBudgetPlanner::next(PlanStep& step) {
  if (!refill()) return false;
  step.epoch = epoch_;
  step.step = step_++;
  step.world_size = world_size_;
  step.ranks = std::move(pending_.front());
  pending_.pop_front();
  return true;
}

}  // namespace evenfeed
