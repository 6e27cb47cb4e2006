#include "bucketing/imbalance_bound.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bucketing/lump_step_bound.h"

namespace evenfeed {
namespace {

// The most step counts searched one by one per lump group before the rest is bounded
// from below by least_over_steps' envelope: keeps the bound's time linear in the lumps'
// distinct lengths on any corpus.
constexpr uint64_t kStepsSearched = 4096;

// The least j in [lo, hi] where `holds` (false, then true, as j grows), or hi + 1.
template <typename Predicate>
uint64_t first_where(uint64_t lo, uint64_t hi, Predicate holds) {
  while (lo <= hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (holds(mid)) {
      if (mid == 0) return 0;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// What the s steps holding the t dearest lumps can hold at most: j lumps (the t and
// the dearest others, t <= j <= min(s W, lumps)), and on the other s W - j ranks the
// fluid, at most all of it (`fluid`) and at most the s W - j largest reaches. Over j
// this rises while the reaches exceed the fluid (all of it is held, and another lump
// adds), then while the next lump is dearer than the least reach it displaces, and
// then falls (the lumps get cheaper, the reaches displaced dearer): so the most is at
// one of those turns, or an end.
struct StepsContent {
  const CostGroups& lumps;    // dearest first
  const CostGroups& reaches;  // the fluid samples' reaches, largest first
  uint64_t ranks;
  double fluid;
  // The most a rank without a lump can hold: the largest reach.
  double partner;

  double at(uint64_t s, uint64_t j) const {
    return lumps.top(j) + std::min(fluid, reaches.top(s * ranks - j));
  }
  double most(uint64_t s, uint64_t t) const {
    const uint64_t lo = t, hi = std::min<uint64_t>(s * ranks, lumps.size());
    if (lo >= hi) return at(s, lo);
    const uint64_t all_fluid =
        first_where(lo, hi, [&](uint64_t j) { return reaches.top(s * ranks - j) <= fluid; });
    const uint64_t falling = first_where(
        lo, hi - 1, [&](uint64_t j) { return lumps.at(j) <= reaches.at(s * ranks - j - 1); });
    double best = std::max(at(s, lo), at(s, hi));
    for (uint64_t j : {all_fluid, all_fluid - 1, falling, std::max(all_fluid, falling)})
      if (j >= lo && j <= hi) best = std::max(best, at(s, j));
    return best;
  }
};

// The least over s (q = ceil(t / W) <= s <= t: the steps holding the t dearest lumps)
// of W (heads + (s - q) c_t) / content.most(s, t), or a value at most `enough` when it
// is no more. `heads` bounds the q dearest steps' dearest batches from below (see
// worst_step); every other step holds one of the t, so costs c_t at least.
// Searched upward while a lower envelope of the rest can still fall below the least so
// far: content.most(s, t) <= top(t) + (s W - t) max(c_t, partner), and <= every lump
// and all the fluid.
double least_over_steps(const StepsContent& content, uint64_t t, double c_t, double heads,
                        double enough) {
  const uint64_t ranks = content.ranks, q = (t + ranks - 1) / ranks;
  const double top_t = content.lumps.top(t), step_rate = std::max(c_t, content.partner);
  const double everything = content.lumps.top(content.lumps.size()) + content.fluid;
  auto ratio = [&](uint64_t s) {
    return (heads + static_cast<double>(s - q) * c_t) * static_cast<double>(ranks) /
           content.most(s, t);
  };
  // A lower bound of ratio(s') for all s' >= s: of s' W c_t / content.most(s', t), which
  // ratio(s') is at least (heads >= q c_t).
  auto envelope = [&](uint64_t s) {
    const double w = static_cast<double>(s * ranks);
    const double rising = c_t * w / everything;
    const double mixed = top_t >= static_cast<double>(t) * step_rate
                             ? c_t * w / (top_t + (w - static_cast<double>(t)) * step_rate)
                             : c_t / step_rate;  // falling towards its limit
    return std::max(rising, mixed);
  };
  double least = ratio(q);
  for (uint64_t s = q + 1; s <= t && least > enough; ++s) {
    if (envelope(s) >= least) return least;
    if (s > q + kStepsSearched) return std::min(least, envelope(s));
    least = std::min(least, ratio(s));
  }
  return least;
}

}  // namespace

ImbalanceBound::ImbalanceBound(const ImbalanceBoundOptions& options)
    : options_(options), budget_(options.cost.budget(options.tokens_per_rank)) {}

bool ImbalanceBound::is_lump(uint64_t length) const {
  // Two samples padded to the longer cost at least twice the shorter's cost: more than
  // the budget when each costs more than half of it (or holds more than half the bound).
  return 2 * cost(length) > 1 ||
         (options_.max_batch_tokens > 0 && 2 * length > options_.max_batch_tokens);
}

double ImbalanceBound::cost(uint64_t length) const {
  return options_.cost.per_sample(length) / budget_;
}

void ImbalanceBound::add(uint64_t length) {
  tokens_ += static_cast<double>(length);
  if (is_lump(length)) {
    ++lumps_[length];
    ++lump_count_;
  } else {
    fluid_cost_ += cost(length);
    if (fluid_lengths_.size() <= length) fluid_lengths_.resize(length + 1, 0);
    ++fluid_lengths_[length];
  }
}

// The fluid's cost plus what padding can add to it (lumps are alone: never padded). A
// padded token costs one token under linear cost; under quadratic, a sample of l padded
// to L costs (L - l)(a + L + l) more, at most a + 2 L per padded token.
double ImbalanceBound::fluid_with_padding() const {
  const double p = std::clamp(options_.padding_share, 0.0, 0.999);
  const double padded_tokens = p / (1 - p) * tokens_;
  const double per_padded_token =
      options_.cost.kind == CostKind::kLinear
          ? 1.0
          : options_.cost.a + 2.0 * static_cast<double>(longest_fluid());
  return fluid_cost_ + padded_tokens * per_padded_token / budget_;
}

// What a batch whose longest sample has `length` tokens can cost at most: n samples
// padded to it, n within the budget (n c <= 1), the sample cap and the token bound.
double ImbalanceBound::reach(uint64_t length) const {
  const double c = cost(length);
  // The budget's own n, with a hair of slack so that c = 1 / k gives k.
  uint64_t n = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(1 / c + 1e-9)));
  if (options_.max_batch_size > 0) n = std::min(n, options_.max_batch_size);
  if (options_.max_batch_tokens > 0)
    n = std::min(n, std::max<uint64_t>(1, options_.max_batch_tokens / length));
  return std::min(1.0, static_cast<double>(n) * c);
}

double ImbalanceBound::worst_step() const {
  if (tokens_ == 0) return 1;
  const uint64_t ranks = std::max<uint32_t>(1, options_.world_size);
  const double fluid = fluid_with_padding();
  std::vector<CostGroup> reach_groups;
  for (uint64_t length = 1; length < fluid_lengths_.size(); ++length)
    if (fluid_lengths_[length] > 0) reach_groups.push_back({reach(length), fluid_lengths_[length]});
  std::sort(reach_groups.begin(), reach_groups.end(), [](const CostGroup& a, const CostGroup& b) {
    return a.cost != b.cost ? a.cost > b.cost : a.count > b.count;
  });
  const CostGroups reaches(reach_groups);
  // With no lumps, the step of the dearest sample: all the fluid at most, and no more
  // than W heads can reach.
  if (lump_count_ == 0)
    return std::max(1.0, static_cast<double>(ranks) * cost(longest_fluid()) /
                             std::min(fluid, reaches.top(ranks)));
  std::vector<CostGroup> lump_groups;  // lumps_ is longest first, so dearest first
  for (const auto& [length, count] : lumps_) lump_groups.push_back({cost(length), count});
  const CostGroups lumps(lump_groups);
  const StepsContent content{lumps, reaches, ranks, fluid, reaches.dearest()};
  // The steps holding the t dearest lumps: at least j of them hold one of the
  // (j - 1) W + 1 dearest (a step holds W lumps at most), so the j-th dearest step's
  // dearest batch costs at least that lump, c_((j-1) W + 1). `heads` sums these for
  // j <= q = ceil(t / W); q only grows with t.
  double worst = 1, heads = 0;
  uint64_t t = 0, q = 0;
  for (const auto& [length, count] : lumps_) {
    t += count;  // a group's bound is highest at its last lump (q grows with t)
    for (; q < (t + ranks - 1) / ranks; ++q) heads += lumps.at(q * ranks);
    worst = std::max(worst, least_over_steps(content, t, cost(length), heads, worst));
  }
  // The same lumps one step at a time (lump_step_bound.h): the larger bound holds.
  return std::max(worst, lump_step_bound(lumps, reaches, ranks));
}

}  // namespace evenfeed
