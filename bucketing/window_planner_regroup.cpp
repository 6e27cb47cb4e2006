// WindowPlanner::regroup_dearest: a finished window's dearest steps planned again
// together (step 4 of window_planner.h, the last way finish_level tries).
//
// Why: the other ways place a window's lumps (samples too dear to share a batch) step by
// step, each step's partners cut from what is left. On Debian changelog entries at 64
// ranks, 32,768 tokens, quadratic (one window an epoch), that left two steps above 1.15:
// one of lumps at 0.50-0.985 of the budget beside a plateau of lumps at the budget, and
// one at 0.245 of the budget whose entries of 7,800-11,400 words could not reach its
// level (two cost 0.14-0.24, three too much). Planned together, the lumps are dealt
// evenly over the steps they fill, and those steps' partners are cut first from the
// entries that would sit awkwardly in the step left over, at the level that step can be
// cut to; the worst step 1.169 -> 1.089 (bench/plan_dear_regroup.py estimated
// it on the plan's dump first; docs/plan_history.md, thirty-eighth session).
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <vector>

#include "bucketing/leftover_scan.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

namespace {

// A sample is awkward at a level where the most of its like that fit under it cost
// less than this share of it (two entries at 0.14 under a level of 0.2, say).
constexpr double kAwkwardShortfall = 0.92;
// The levels, as shares of the budget, the partners of the lumps are cut to.
constexpr double kPartnerLevels[] = {1.0, 0.97, 0.94, 0.91};
// The levels, as shares of the budget, awkwardness is judged at: 0.10 to 0.30.
constexpr int kAwkwardLevels = 41;
constexpr double kAwkwardLowest = 0.10, kAwkwardStep = 0.005;
// The leftover step's levels tried, between the least that makes 8 W batches and the
// least that makes W.
constexpr int kLeftoverLevels = 121;
constexpr int kLeftoverSpread = 8;
// Halvings of the budget that find the least level for a cut (2^-30 of it).
constexpr int kLevelSearchSteps = 30;
// Windows whose dearest steps hold more samples are not regrouped: the scan cuts the
// pool some 30,000 times.
constexpr size_t kMostRegrouped = 16384;

}  // namespace

// The spans of `entries` (key order) cut in order into batches each as long as fits
// under `level`, at most `most` of them, appended to `spans` when given; returns where
// the cut stopped. The one rule every cut of the regroup follows (the scans of
// least_leftover_cut find the same spans by GreedySegments' jumps: leftover_scan.h).
size_t WindowPlanner::cut_spans(const std::vector<Entry>& entries, double level, size_t most,
                                std::vector<Span>* spans) const {
  size_t next = 0;
  for (size_t made = 0; next < entries.size() && made < most; ++made) {
    Span span{.begin = next};
    for (; next < entries.size(); ++next) {
      const uint64_t longest = std::max(span.longest, entries[next].length);
      if (span.count > 0 && !limits_.fits_at(span.count + 1, longest, level)) break;
      span.longest = longest;
      ++span.count;
    }
    span.cost = options_.cost.batch(span.count, span.longest);
    if (spans) spans->push_back(span);
  }
  return next;
}

// The batches cut_spans cuts; `next` is set to where it stopped.
std::vector<WindowPlanner::Batch> WindowPlanner::cut_in_order(const std::vector<Entry>& entries,
                                                              double level, size_t most,
                                                              size_t& next) const {
  std::vector<Span> spans;
  next = cut_spans(entries, level, most, &spans);
  return batches_of(entries, spans);
}

// The least level at which `entries` make at most `most` batches.
double WindowPlanner::least_level_for(const std::vector<Entry>& entries, size_t most) const {
  return least_level_for(segments_of(entries), most);
}

// The same, counted by `greedy` (the segments of those entries): the same cuts as
// cut_spans', found by jumps rather than by a scan of every sample, and fewer of them
// (GreedySegments::least_level), since least_leftover_cut asks twice per choice of
// levels and best_regroup makes 164 choices.
double WindowPlanner::least_level_for(const GreedySegments& greedy, size_t most) const {
  return greedy.least_level(greedy.all(), most, 0, limits_.budget, kLevelSearchSteps);
}

// The level, scanned between the least that cuts `entries` into 8 W batches and the
// least into W, whose first W batches are most level; nullopt when none makes W, or
// when none is more level than `beat` (leftover_scan.h).
std::optional<LeftoverCut> WindowPlanner::least_leftover_cut(const std::vector<Entry>& entries,
                                                             double beat) const {
  const size_t W = world_size_;
  if (entries.empty()) return std::nullopt;
  const GreedySegments greedy = segments_of(entries);
  LeftoverScan scan{.world_size = W,
                    .cost = options_.cost,
                    .low = least_level_for(greedy, kLeftoverSpread * W),
                    .high = least_level_for(greedy, W),
                    .levels = kLeftoverLevels};
  for (const Entry& e : entries)
    scan.dearest_alone = std::max(scan.dearest_alone, options_.cost.batch(1, e.length));
  return most_level_cut(greedy, scan, beat);
}

// `batches` dealt dearest first, each to the step of least work with a rank free, into
// `steps` steps of W.
std::vector<WindowPlanner::Planned> WindowPlanner::deal_evenly(std::vector<Batch> batches,
                                                               size_t steps) const {
  // Dearest first, ties in key order: the same deal whatever the standard library.
  std::sort(batches.begin(), batches.end(), [](const Batch& a, const Batch& b) {
    return a.cost != b.cost ? a.cost > b.cost : by_key(a.entries.front(), b.entries.front());
  });
  std::vector<std::vector<Batch>> dealt(steps);
  std::vector<double> work(steps, 0.0);
  for (Batch& b : batches) {
    size_t to = steps;
    for (size_t k = 0; k < steps; ++k)
      if (dealt[k].size() < world_size_ && (to == steps || work[k] < work[to])) to = k;
    work[to] += b.cost;
    dealt[to].push_back(std::move(b));
  }
  std::vector<Planned> planned;
  for (std::vector<Batch>& d : dealt) planned.push_back(make_step(std::move(d)));
  return planned;
}

// Whether `e` sits awkwardly at `level`: dearer alone, or the most like it that fit
// under the level fall short of it by more than kAwkwardShortfall.
bool WindowPlanner::awkward_at(const Entry& e, double level) const {
  const double alone = options_.cost.batch(1, e.length);
  if (alone > level) return true;
  const auto count = static_cast<uint64_t>(level / alone);
  return options_.cost.batch(count, e.length) < kAwkwardShortfall * level;
}

// The pooled samples besides the lumps split for one choice of levels: the partners'
// candidates, awkward ones first, how many of each the partners take, and the rest
// (key order) for the step left over.
struct WindowPlanner::RegroupSplit {
  std::vector<Entry> awkward, plain, left;
  size_t awkward_taken = 0, plain_taken = 0;
};

WindowPlanner::RegroupSplit WindowPlanner::split_for(const std::vector<Entry>& rest, size_t slots,
                                                     double partner_level, double awkward_level,
                                                     std::vector<double>* partner_costs) const {
  RegroupSplit split;
  for (const Entry& e : rest)
    (awkward_at(e, awkward_level) ? split.awkward : split.plain).push_back(e);
  std::vector<Span> partners;
  split.awkward_taken = cut_spans(split.awkward, partner_level, slots, &partners);
  split.plain_taken = cut_spans(split.plain, partner_level, slots - partners.size(), &partners);
  const auto from = [](std::vector<Entry>& v, size_t k) {
    return v.begin() + static_cast<std::ptrdiff_t>(k);
  };
  std::merge(from(split.awkward, split.awkward_taken), split.awkward.end(),
             from(split.plain, split.plain_taken), split.plain.end(),
             std::back_inserter(split.left), by_key);
  if (partner_costs)
    for (const Span& span : partners) partner_costs->push_back(span.cost);
  return split;
}

// The worst step of `lump_steps` steps of W that `costs` make, dealt dearest first to
// the step of least work with a rank free (as deal_evenly deals batches).
double WindowPlanner::dealt_worst(std::vector<double> costs, size_t lump_steps) const {
  std::sort(costs.begin(), costs.end(), std::greater<>());
  std::vector<double> work(lump_steps, 0.0), dearest(lump_steps, 0.0);
  std::vector<size_t> taken(lump_steps, 0);
  for (double c : costs) {
    size_t to = lump_steps;
    for (size_t k = 0; k < lump_steps; ++k)
      if (taken[k] < world_size_ && (to == lump_steps || work[k] < work[to])) to = k;
    work[to] += c;
    dearest[to] = std::max(dearest[to], c);
    ++taken[to];
  }
  double worst = 1;
  for (size_t k = 0; k < lump_steps; ++k)
    if (work[k] > 0)
      worst = std::max(worst, dearest[k] * static_cast<double>(world_size_) / work[k]);
  return worst;
}

// The choice of levels whose worst step is most level, over kPartnerLevels x the
// awkward levels, each with its leftover's most level cut; nullopt when none cuts.
std::optional<WindowPlanner::RegroupChoice> WindowPlanner::best_regroup(
    const std::vector<Entry>& lumps, const std::vector<Entry>& rest, size_t lump_steps) const {
  const size_t slots = lump_steps * world_size_ - lumps.size();
  std::optional<RegroupChoice> best;
  for (double partner_share : kPartnerLevels) {
    for (int k = 0; k < kAwkwardLevels; ++k) {
      const RegroupChoice choice{partner_share * limits_.budget,
                                 (kAwkwardLowest + kAwkwardStep * k) * limits_.budget};
      std::vector<double> costs;
      const RegroupSplit split =
          split_for(rest, slots, choice.partner_level, choice.awkward_level, &costs);
      for (const Entry& e : lumps) costs.push_back(options_.cost.batch(1, e.length));
      const double dealt = dealt_worst(std::move(costs), lump_steps);
      // A choice is kept only below the best's worst step: its lumps' steps must be, and
      // so must its leftover's cut, whose scan gives up the levels that cannot be.
      const double beat = best ? best->worst : std::numeric_limits<double>::infinity();
      if (dealt >= beat) continue;
      const std::optional<LeftoverCut> cut = least_leftover_cut(split.left, beat);
      if (!cut) continue;
      const double worst = std::max(dealt, cut->ratio);
      if (worst < beat) {
        best = choice;
        best->leftover_level = cut->level;
        best->worst = worst;
      }
    }
  }
  return best;
}

// The lumps' steps and the step left over made as `choice` says; `spill` gets what the
// step left over cannot hold.
std::vector<WindowPlanner::Planned> WindowPlanner::regroup_as(const std::vector<Entry>& lumps,
                                                              const std::vector<Entry>& rest,
                                                              size_t lump_steps,
                                                              const RegroupChoice& choice,
                                                              std::vector<Entry>& spill) const {
  const size_t slots = lump_steps * world_size_ - lumps.size();
  RegroupSplit split = split_for(rest, slots, choice.partner_level, choice.awkward_level, nullptr);
  size_t next = 0;
  std::vector<Batch> top = cut_in_order(split.awkward, choice.partner_level, slots, next);
  for (Batch& b : cut_in_order(split.plain, choice.partner_level, slots - top.size(), next))
    top.push_back(std::move(b));
  for (const Entry& e : lumps) {
    Batch b{{e}, 0, 0};
    recost(b);
    top.push_back(std::move(b));
  }
  std::vector<Planned> steps = deal_evenly(std::move(top), lump_steps);
  std::vector<Batch> leftover = cut_in_order(split.left, choice.leftover_level, world_size_, next);
  spill.assign(split.left.begin() + static_cast<std::ptrdiff_t>(next), split.left.end());
  steps.push_back(make_step(std::move(leftover)));
  return steps;
}

// Whether `step` holds a lump: a sample too dear to share a batch (alone in its batch).
bool WindowPlanner::holds_lump(const Planned& step) const {
  return std::any_of(step.batches.begin(), step.batches.end(), [&](const Batch& b) {
    return b.entries.size() == 1 && is_lump(b.entries[0], true);
  });
}

// `steps` (a window finished) with the steps holding lumps and the dearest other step
// planned again together (see the top of this file); nullopt where there is nothing to
// regroup. What the step left over cannot hold is cut again with the samples of the
// other step whose samples are longest.
std::optional<std::vector<WindowPlanner::Planned>> WindowPlanner::regroup_dearest(
    const std::vector<Planned>& steps) const {
  std::vector<Entry> pool;
  std::vector<size_t> others;
  size_t lump_steps = 0;
  const auto pool_step = [&](size_t s) {
    for (const Batch& b : steps[s].batches)
      pool.insert(pool.end(), b.entries.begin(), b.entries.end());
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    if (!holds_lump(steps[s])) {
      others.push_back(s);
      continue;
    }
    ++lump_steps;
    pool_step(s);
  }
  if (lump_steps == 0 || others.empty()) return std::nullopt;
  const auto next_dearest = std::max_element(others.begin(), others.end(), [&](size_t a, size_t b) {
    return kth_dearest(steps[a], 0) < kth_dearest(steps[b], 0);
  });
  pool_step(*next_dearest);
  others.erase(next_dearest);
  if (pool.size() > kMostRegrouped) return std::nullopt;
  sort_by_key(pool);
  std::vector<Entry> lumps, rest;
  for (const Entry& e : pool) (is_lump(e, true) ? lumps : rest).push_back(e);
  if (lumps.size() > lump_steps * world_size_) return std::nullopt;
  const std::optional<RegroupChoice> choice = best_regroup(lumps, rest, lump_steps);
  if (!choice) return std::nullopt;
  std::vector<Entry> spill;
  std::vector<Planned> dear = regroup_as(lumps, rest, lump_steps, *choice, spill);
  return with_spill_cut(std::move(dear), steps, others, std::move(spill));
}

// `dear` (the regrouped steps) and the window's `others`, the samples of `spill` cut
// again with those of the other step whose longest sample is longest (or, with no other
// step, into a step of their own); nullopt where W batches cannot hold them.
std::optional<std::vector<WindowPlanner::Planned>> WindowPlanner::with_spill_cut(
    std::vector<Planned> dear, const std::vector<Planned>& steps, const std::vector<size_t>& others,
    std::vector<Entry> spill) const {
  size_t host = steps.size();
  uint64_t host_longest = 0;
  for (size_t s : others)
    for (const Batch& b : steps[s].batches)
      if (b.longest > host_longest) host_longest = b.longest, host = s;
  for (size_t s : others) {
    if (s != host || spill.empty()) {
      dear.push_back(steps[s]);
      continue;
    }
    for (const Batch& b : steps[s].batches)
      spill.insert(spill.end(), b.entries.begin(), b.entries.end());
  }
  if (spill.empty()) return dear;
  sort_by_key(spill);
  size_t next = 0;
  std::vector<Batch> cut =
      cut_in_order(spill, least_level_for(spill, world_size_), world_size_, next);
  if (next < spill.size()) return std::nullopt;  // more than W batches at the budget hold
  dear.push_back(make_step(std::move(cut)));
  return dear;
}

}  // namespace evenfeed
