// WindowPlanner, capped fillers: the samples a sample cap or token bound keeps from
// filling the budget are cut into steps of their own, shortest first, each step at a
// level of its own (plan_capped, step 3 in window_planner.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

// A capped step within this max/mean keeps the level its first batch sets; above it,
// the levels that fit its coarsest batches exactly are tried (capped_level).
static constexpr double kCappedLevelEnough = 1.01;
// How many of a step's coarsest batches (fewest samples) propose levels.
static constexpr size_t kCappedLevelProposers = 8;

// Capped fillers, cut shortest first, W batches per step: the step's first batch of
// the shortest samples at the cap (or as many as the budget takes), the others cut to
// the step's level (capped_level). These steps stay apart from the rest: their samples
// cannot reach the levels of coarse lumps, so they are neither taken back nor borrowed
// from for a final cut. What does not make a whole step stays in `capped`.
std::optional<WindowPlanner::CappedFork> WindowPlanner::plan_capped(Work& work,
                                                                    bool choose_levels) const {
  std::vector<Entry>& capped = work.capped;
  std::optional<CappedFork> fork;
  while (!capped.empty()) {
    const double first_level = batch_below(capped, capped.size(), limits_.budget).cost;
    const double level = choose_levels ? capped_level(capped, first_level) : first_level;
    if (level != first_level && !fork) fork = CappedFork{capped, work.apart.size()};
    std::vector<Batch> step{cut_to_level(capped, level, true)};
    while (step.size() < world_size_) {
      Batch b = cut_to_level(capped, level);
      if (b.entries.empty()) break;
      step.push_back(std::move(b));
    }
    if (step.size() < world_size_) {
      for (const Batch& b : step) capped.insert(capped.end(), b.entries.begin(), b.entries.end());
      break;
    }
    work.apart.push_back(make_step(std::move(step)));
  }
  return fork;
}

// The step plan_capped would cut from the back of `capped` at `level`, without taking
// it: fewer than W batches when the samples run out.
std::vector<WindowPlanner::Span> WindowPlanner::capped_step_at(const std::vector<Entry>& capped,
                                                               double level) const {
  std::vector<Span> step{batch_below(capped, capped.size(), level)};
  while (step.size() < world_size_ && step.back().count > 0)
    step.push_back(batch_below(capped, skip_unreachable(capped, step.back().begin, level), level));
  if (step.back().count == 0) step.pop_back();
  return step;
}

// max/mean of the spans' costs, as imbalance(batches) of the batches they would be.
double WindowPlanner::imbalance(const std::vector<Span>& spans) const {
  return max_over_mean(spans, world_size_);
}

// The level the next capped step is cut at. Its first batch, of the shortest samples,
// sets it (`first_level`): a step is then level within one sample's grain. Where the
// step runs into longer samples, that grain is coarse (a batch of five 55-token
// samples beside batches of sixty-four 5-token ones under quadratic cost misses the
// level by up to a sixth), and such tiny steps, cheap as they are, count as much as
// any other in the imbalance a user sees. So when the step would be out of level, the
// levels at which its coarsest batches are exact (their count, or one more) are tried
// as well, and the most level step kept; the samples it leaves go to the next step.
double WindowPlanner::capped_level(const std::vector<Entry>& capped, double first_level) const {
  std::vector<Span> step = capped_step_at(capped, first_level);
  if (step.size() < world_size_) return first_level;
  double best_level = first_level, best = imbalance(step);
  if (best <= kCappedLevelEnough) return first_level;
  std::stable_sort(step.begin(), step.end(),
                   [](const Span& a, const Span& b) { return a.count < b.count; });
  std::vector<double> levels;
  for (size_t k = 0; k < std::min(step.size(), kCappedLevelProposers); ++k) {
    for (uint64_t count : {step[k].count, step[k].count + 1}) {
      if (fits(count, step[k].longest))
        levels.push_back(options_.cost.batch(count, step[k].longest));
    }
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  for (double level : levels) {
    if (level == first_level) continue;
    const std::vector<Span> trial = capped_step_at(capped, level);
    if (trial.size() < world_size_) continue;
    if (const double after = imbalance(trial); after < best) {
      best = after;
      best_level = level;
    }
  }
  return best_level;
}

}  // namespace evenfeed
