// WindowPlanner::lift_light_batches: in the epoch's last window, the light batches of
// its steps out of level replaced by batches cut to their step's level from the samples
// of its other steps, which are then planned again.
//
// In an epoch of few steps, a step's dearest batch is often one sample too long to
// share a batch, and its other ranks hold batches of a few mid-length samples, packed
// at the budget and grouped with it because they cost about as much: a band of costs
// that no exchange of whole batches narrows and no sample added evens out (one more
// mid-length sample overshoots the level). Java sources, quadratic, 64 ranks, 32,768
// tokens: a step of files truncated to the budget beside pairs of 18,000-20,000 token
// files at 0.68-0.83 of it. The window's other steps hold samples of which a batch can
// be cut much nearer a level. So each light batch of a step above kLiftAbove (cheaper
// than kLiftTo of its step's dearest, its samples no longer than the longest of the
// other steps') trades places with a batch of the other steps' samples costing between
// kLiftTo of the level and the level: of each count, the samples nearest below the
// length that count allows (the least padding), the dearest such batch kept. Its own
// samples join the others'. Those are then planned again as the window's end is
// (plan_steps), and the whole kept only where it is more level (more_level), runs no
// longer and pads no more than the padding guard (or than before): what the light
// batches held may make a band of their own elsewhere. The replan costs about what the
// window's first plan did, and is kept on few of the windows it is tried on (java
// sources: kept; markup documents, linear, 64 ranks, 4,096 tokens: every replan ran
// longer), so it is made only in windows of at most kMostLiftSamples samples and where
// the lifted steps, beside the others as they were, would be more level; even so a
// small corpus's plan can take 1.7 times as long (BENCHMARKS.md, "Against the targets").
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <utility>
#include <vector>

#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

namespace {

// A step above this max/mean has its light batches lifted.
constexpr double kLiftAbove = 1.03;
// A batch cheaper than this share of its step's dearest is light, and is replaced
// only by one costing at least this share of it.
constexpr double kLiftTo = 0.98;
// Only a window of at most this many samples is lifted: the replan of its other
// steps costs about what the window's first plan did (doc_sentences, 1.8 million
// sentences, quadratic, 64 ranks, 16,384 tokens: 21 -> 41 s for no change at all).
constexpr uint64_t kMostLiftSamples = uint64_t{1} << 16;
// Only steps whose dearest batch costs at least this share of the budget are lifted:
// cheaper ones are what the cheap steps are made of.
constexpr double kLiftedLeast = 0.1;
// A batch cut from the pool may pad at most this share of its slots.
constexpr double kLiftPadding = 0.02;

// Shortest first; equal lengths by id, so the pool's order is one total order.
template <class Entry>
bool shorter(const Entry& a, const Entry& b) {
  return a.length != b.length ? a.length < b.length : a.id < b.id;
}

}  // namespace

// The batch of `pool` (shortest first) costing most under `level`, at least `least`,
// padding at most kLiftPadding: for each count, the samples nearest below the longest
// length that count allows. Empty when none.
WindowPlanner::Batch WindowPlanner::cut_from_pool(const std::vector<Entry>& pool, double level,
                                                  double least) const {
  std::vector<double> prefix(pool.size() + 1, 0.0);
  for (size_t k = 0; k < pool.size(); ++k)
    prefix[k + 1] = prefix[k] + static_cast<double>(pool[k].length);
  size_t best_end = 0, best_count = 0;
  double best_cost = 0;
  for (size_t count = 1; count <= pool.size(); ++count) {
    // The end of the samples a batch of `count` can take: those whose batch of `count`
    // costs at most `level` and fits.
    const auto end = std::partition_point(pool.begin(), pool.end(), [&](const Entry& e) {
      return options_.cost.batch(count, e.length) <= level && fits(count, e.length);
    });
    const size_t last = static_cast<size_t>(end - pool.begin());
    if (last == 0) break;     // longer counts allow even less
    if (last < count) break;  // fewer fit at larger counts still
    const uint64_t longest = pool[last - 1].length;
    const double cost = options_.cost.batch(count, longest);
    const double slots = static_cast<double>(count) * static_cast<double>(longest);
    const double tokens = prefix[last] - prefix[last - count];
    if (cost < least || 1.0 - tokens / slots > kLiftPadding) continue;
    if (cost > best_cost) {
      best_cost = cost;
      best_end = last;
      best_count = count;
    }
  }
  Batch batch;
  if (best_count == 0) return batch;
  batch.entries.assign(pool.begin() + static_cast<long>(best_end - best_count),
                       pool.begin() + static_cast<long>(best_end));
  recost(batch);
  return batch;
}

void WindowPlanner::lift_light_batches(std::vector<Planned>& planned) const {
  uint64_t samples = 0;
  for (const Planned& step : planned) samples += step.samples;
  if (samples > kMostLiftSamples) return;
  std::vector<Planned> candidate;
  std::vector<Entry> pool;     // the samples of the steps not lifted, shortest first
  std::vector<double> ratios;  // the max/mean of those steps
  for (const Planned& step : planned) {
    const double ratio = imbalance(step);
    if (ratio > kLiftAbove && dearest(step) >= kLiftedLeast * limits_.budget) {
      candidate.push_back(step);
    } else {
      ratios.push_back(ratio);
      for (const Batch& b : step.batches)
        pool.insert(pool.end(), b.entries.begin(), b.entries.end());
    }
  }
  if (candidate.empty() || pool.empty()) return;
  std::sort(pool.begin(), pool.end(), shorter<Entry>);
  size_t lifts = 0;
  for (Planned& step : candidate) lifts += lift_step(step, pool);
  // The replan costs about what the window's first plan did: it is made only where the
  // lifted steps, beside the others as they were, would be more level.
  for (const Planned& step : candidate) ratios.push_back(imbalance(step));
  const StepsLevel level = level_of(planned);
  if (lifts == 0 || !more_level(level_of_ratios(ratios), level)) return;
  std::vector<PlanItem> items;
  items.reserve(pool.size());
  for (const Entry& e : pool) items.push_back({e.id, e.length});
  std::vector<PlanItem> no_carry;  // the last window carries nothing
  for (Planned& p : plan_steps(std::move(items), true, no_carry)) candidate.push_back(std::move(p));
  if (duration(candidate) <= duration(planned) &&
      padding_share(candidate) <= std::max(padding_share(planned), options_.padding_guard) &&
      more_level(level_of(candidate), level))
    planned = std::move(candidate);
}

// Replaces `step`'s light batches, the lightest first, with batches cut from `pool`
// (shortest first), which takes their samples in exchange; returns how many.
size_t WindowPlanner::lift_step(Planned& step, std::vector<Entry>& pool) const {
  const double level = dearest(step);
  std::vector<size_t> order(step.batches.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return step.batches[a].cost < step.batches[b].cost; });
  size_t lifts = 0;
  for (size_t r : order) {
    Batch& light = step.batches[r];
    if (light.cost >= kLiftTo * level || pool.empty()) break;
    // Samples longer than any in the pool would be left to a replan of shorter ones.
    if (light.longest > pool.back().length) continue;
    Batch lift = cut_from_pool(pool, level, kLiftTo * level);
    if (lift.entries.empty()) break;  // the pool is as it was: nor will the others
    std::vector<Entry> rest;
    rest.reserve(pool.size() - lift.entries.size() + light.entries.size());
    std::set_difference(pool.begin(), pool.end(), lift.entries.begin(), lift.entries.end(),
                        std::back_inserter(rest), shorter<Entry>);
    std::vector<Entry> given = std::move(light.entries);
    std::sort(given.begin(), given.end(), shorter<Entry>);
    pool.clear();
    std::merge(rest.begin(), rest.end(), given.begin(), given.end(), std::back_inserter(pool),
               shorter<Entry>);
    light = std::move(lift);
    ++lifts;
  }
  count_samples(step);
  return lifts;
}

}  // namespace evenfeed
