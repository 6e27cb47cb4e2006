#include "bucketing/token_budget_planner.h"

#include <algorithm>
#include <iterator>

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
  if (options.max_batch_size > 0) per_batch = std::min(per_batch, options.max_batch_size);
  return std::max<uint64_t>(65536, 256 * std::max<uint64_t>(1, per_batch));
}

double automatic_noise_cap(const LengthSource& lengths, const BucketingOptions& options) {
  // A window's worth of evenly spaced ids (like automatic_window, independent of seed,
  // epoch and world size), sorted with each candidate noise and packed greedily.
  BucketingOptions o = options;
  if (o.window == 0) o.window = automatic_window(lengths, options);
  const uint64_t n = lengths.size(), probes = std::min(n, o.window);
  std::vector<PlanItem> items(probes);
  for (uint64_t k = 0; k < probes; ++k) {
    const uint64_t id = k * n / probes;
    items[k] = {id, std::clamp<uint64_t>(lengths.length(id), 1, options.tokens_per_rank)};
  }
  auto fits = [&](double cap) {
    o.noise_cap = cap;
    return WindowPlanner(o, 1, 0, 0).noisy_sort_padding(items) <= options.noise_cap_padding;
  };
  // Padding grows with the noise: bisect for the widest cap that fits (the narrowest
  // is taken untried when nothing wider fits).
  size_t lo = 0, hi = std::size(kNoiseCaps) - 1;
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (fits(kNoiseCaps[mid])) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return kNoiseCaps[lo];
}

BucketingOptions resolve_automatic(const LengthSource& lengths, BucketingOptions options) {
  if (options.window == 0) options.window = automatic_window(lengths, options);
  if (options.noise_cap == 0) options.noise_cap = automatic_noise_cap(lengths, options);
  return options;
}

TokenBudgetPlanner::TokenBudgetPlanner(const LengthSource& lengths, const BucketingOptions& options,
                                       uint32_t world_size, const PlanState& state)
    : lengths_(lengths), seed_(state.seed), epoch_(state.epoch) {
  check_world(world_size, lengths.size());
  EVENFEED_CHECK(options.tokens_per_rank > 0, "tokens per rank must be at least 1");
  EVENFEED_CHECK(
      options.max_batch_tokens == 0 || options.max_batch_tokens >= options.tokens_per_rank,
      "max batch tokens {} is below the per-rank budget of {} tokens, so a sample of "
      "the budget's length could not fit; raise --max-batch-tokens or leave it 0",
      options.max_batch_tokens, options.tokens_per_rank);
  const uint64_t n = lengths.size();
  options_ = resolve_automatic(lengths, options);
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
  // Steps planned for the old world size but not served go back to be re-planned.
  for (const StepBatches& step : pending_) {
    for (const RankBatch& batch : step) {
      for (uint64_t id : batch.samples) carry_.push_back(item(id));
    }
  }
  pending_.clear();
  world_size_ = world_size;
  planner_ = std::make_unique<WindowPlanner>(options_, world_size, seed_, epoch_);
}

bool TokenBudgetPlanner::refill() {
  const uint64_t n = order_->size();
  while (pending_.empty()) {
    if (position_ >= n && carry_.empty()) return false;
    std::vector<PlanItem> items = std::move(carry_);
    carry_.clear();
    // Windows of (nearly) equal size, so the last one is not a runt.
    const uint64_t end =
        window_index_ + 1 >= windows_
            ? n
            : static_cast<uint64_t>(static_cast<__uint128_t>(window_index_ + 1) * n / windows_);
    for (; position_ < end; ++position_) items.push_back(item(order_->at(position_)));
    const bool last = position_ >= n;
    std::vector<StepBatches> steps;
    last_mean_ = planner_->plan(std::move(items), last, window_index_++, last_mean_, steps, carry_);
    for (StepBatches& s : steps) pending_.push_back(std::move(s));
  }
  return true;
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
