#include "bucketing/split_across_windows.h"

#include <algorithm>

#include "bucketing/lump_runs.h"
#include "bucketing/split_in_cost_order.h"

namespace evenfeed {
namespace {

// The steps of both windows as batches (units) and, per step, the indices of its
// batches, for split_in_cost_order and swap_to_level to move between steps.
struct BatchUnits {
  std::vector<RankBatch> batches;
  std::vector<double> costs;
  std::vector<std::vector<size_t>> steps;
};

double batch_cost(const RankBatch& b, const CostModel& cost,
                  const std::function<uint64_t(uint64_t)>& length_of) {
  uint64_t longest = 0;
  for (uint64_t id : b.samples) longest = std::max(longest, length_of(id));
  return b.samples.empty() ? 0.0 : cost.batch(b.samples.size(), longest);
}

void add_steps(std::vector<StepBatches>& steps, const CostModel& cost,
               const std::function<uint64_t(uint64_t)>& length_of, BatchUnits& units) {
  for (StepBatches& step : steps) {
    std::vector<size_t> members;
    for (RankBatch& b : step) {
      members.push_back(units.batches.size());
      units.costs.push_back(batch_cost(b, cost, length_of));
      units.batches.push_back(std::move(b));
    }
    units.steps.push_back(std::move(members));
  }
}

// Each of `steps` rebuilt from its members, starting at step `first` of `units`.
void take_steps(BatchUnits& units, size_t first, std::vector<StepBatches>& steps) {
  for (size_t s = 0; s < steps.size(); ++s) {
    StepBatches& step = steps[s];
    step.clear();
    for (size_t k : units.steps[first + s]) step.push_back(std::move(units.batches[k]));
  }
}

bool every_step_level(const BatchUnits& units, double level_enough) {
  return std::all_of(units.steps.begin(), units.steps.end(), [&](const std::vector<size_t>& s) {
    double dearest = 0, sum = 0;
    for (size_t k : s) {
      dearest = std::max(dearest, units.costs[k]);
      sum += units.costs[k];
    }
    return step_imbalance(dearest, sum, s.size()) <= level_enough;
  });
}

}  // namespace

size_t split_across_windows(std::vector<StepBatches>& held, std::vector<StepBatches>& fresh,
                            const CostModel& cost,
                            const std::function<uint64_t(uint64_t)>& length_of,
                            const CrossWindowSplitOptions& options) {
  if (held.empty() || fresh.empty()) return 0;
  const size_t width = held.front().size();
  BatchUnits units;
  add_steps(held, cost, length_of, units);
  add_steps(fresh, cost, length_of, units);
  size_t splits = 0;
  if (!every_step_level(units, options.level_enough)) {
    splits = split_in_cost_order(units.costs, units.steps);
    if (splits > 0) swap_to_level(units.costs, units.steps, options.swaps_per_rank * width);
  }
  take_steps(units, 0, held);
  take_steps(units, held.size(), fresh);
  return splits;
}

}  // namespace evenfeed
