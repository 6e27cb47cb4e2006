// merge_cheap_steps and deal_under_heads: see the header for what and why.
#include "bucketing/step_merging.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <queue>

namespace evenfeed {
namespace {

// What the planner's figures need of a step: its batch costs' sum and maximum, the
// max/mean over its ranks, and its padded token slots.
struct StepFigures {
  double total = 0, dearest = 0, ratio = 1, slots = 0;
};

StepFigures figures_of(std::span<const uint64_t> lengths,
                       const std::vector<std::vector<size_t>>& step, const CostModel& cost) {
  StepFigures f;
  for (const std::vector<size_t>& batch : step) {
    if (batch.empty()) continue;
    uint64_t longest = 0;
    for (size_t k : batch) longest = std::max(longest, lengths[k]);
    const double c = cost.batch(batch.size(), longest);
    f.total += c;
    f.dearest = std::max(f.dearest, c);
    f.slots += static_cast<double>(batch.size() * longest);
  }
  if (f.total > 0) f.ratio = f.dearest * static_cast<double>(step.size()) / f.total;
  return f;
}

std::vector<size_t> samples_of(const std::vector<std::vector<size_t>>& step) {
  std::vector<size_t> samples;
  for (const std::vector<size_t>& batch : step) samples.insert(samples.end(), batch.begin(), batch.end());
  return samples;
}

}  // namespace

std::optional<std::vector<std::vector<size_t>>> deal_under_heads(
    std::span<const uint64_t> lengths, std::vector<size_t> samples, size_t ranks,
    const CostModel& cost, const std::function<bool(uint64_t, uint64_t)>& fits, double budget) {
  if (ranks == 0 || samples.size() < ranks) return std::nullopt;
  // Longest first, position last, so the deal does not depend on the samples' order.
  std::sort(samples.begin(), samples.end(), [&](size_t a, size_t b) {
    return lengths[a] != lengths[b] ? lengths[a] > lengths[b] : a < b;
  });
  std::vector<std::vector<size_t>> batches(ranks);
  // Each batch keyed by what it would cost with one more sample; every sample left is
  // no longer than any head, so a batch's cost grows by its head's per-sample cost.
  using Next = std::pair<double, size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (size_t r = 0; r < ranks; ++r) {
    batches[r].push_back(samples[r]);
    next.push({cost.batch(2, lengths[samples[r]]), r});
  }
  for (size_t k = ranks; k < samples.size(); ++k) {
    for (;;) {
      if (next.empty()) return std::nullopt;
      const auto [after, r] = next.top();
      next.pop();
      const uint64_t head = lengths[batches[r].front()];
      // A batch that cannot take one more now never can: its count only grows.
      if (after > budget || !fits(batches[r].size() + 1, head)) continue;
      batches[r].push_back(samples[k]);
      next.push({cost.batch(batches[r].size() + 1, head), r});
      break;
    }
  }
  return batches;
}

double merge_cheap_steps(std::span<const uint64_t> lengths,
                         std::vector<std::vector<std::vector<size_t>>>& steps,
                         const CostModel& cost,
                         const std::function<bool(uint64_t, uint64_t)>& fits,
                         const MergeOptions& options) {
  double spent = 0;
  std::vector<StepFigures> figures;
  for (const auto& step : steps) figures.push_back(figures_of(lengths, step, cost));
  // Each pass tries the steps in order of total cost, the two cheapest first; a merge
  // starts the next pass. Pairs further on cost at least as much together, so the
  // first pair too dear to share one step ends the pass.
  // Each try deals two steps' samples; a window of many cheap steps that will not merge
  // is not tried pair by pair without end.
  size_t tries_left = 4 * steps.size();
  bool merged = true;
  while (merged && steps.size() >= 2) {
    merged = false;
    std::vector<size_t> order(steps.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return figures[a].total < figures[b].total; });
    for (size_t k = 0; k + 1 < order.size() && !merged && tries_left > 0; ++k, --tries_left) {
      const size_t s = order[k], t = order[k + 1];
      const StepFigures& fs = figures[s];
      const StepFigures& ft = figures[t];
      const size_t ranks = steps[s].size();
      if (fs.total + ft.total > options.budget * static_cast<double>(ranks)) break;
      std::vector<size_t> both = samples_of(steps[s]);
      const std::vector<size_t> more = samples_of(steps[t]);
      both.insert(both.end(), more.begin(), more.end());
      auto dealt = deal_under_heads(lengths, std::move(both), ranks, cost, fits, options.budget);
      if (!dealt) continue;
      const StepFigures fm = figures_of(lengths, *dealt, cost);
      const double added = fm.slots - fs.slots - ft.slots;
      if (getenv("EF_DBG")) fprintf(stderr, "try %zu+%zu: ratios %.4f %.4f -> %.4f dear %.3g %.3g -> %.3g added %.0f room %.0f\n", s, t, fs.ratio, ft.ratio, fm.ratio, fs.dearest, ft.dearest, fm.dearest, added, options.padding_room - spent);
      if (fm.ratio > std::max(fs.ratio, ft.ratio) || fm.dearest > fs.dearest + ft.dearest + options.step_fixed_cost ||
          spent + added > options.padding_room)
        continue;
      spent += added;
      steps[s] = std::move(*dealt);
      figures[s] = fm;
      steps.erase(steps.begin() + static_cast<long>(t));
      figures.erase(figures.begin() + static_cast<long>(t));
      merged = true;
    }
  }
  return spent;
}

}  // namespace evenfeed
