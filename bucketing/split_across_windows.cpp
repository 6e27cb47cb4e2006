#include "bucketing/split_across_windows.h"

#include <algorithm>

#include "bucketing/cost_model.h"
#include "bucketing/split_in_cost_order.h"

namespace evenfeed {
namespace {

// The steps of both windows as batches (units) and, per step, the indices of its
// batches, for split_in_cost_order to move between steps.
struct BatchUnits {
  std::vector<RankBatch> batches;
  std::vector<double> costs;
  std::vector<std::vector<size_t>> steps;
};

void add_steps(std::vector<CostedStep>& steps, BatchUnits& units) {
  for (CostedStep& step : steps) {
    std::vector<size_t> members;
    for (size_t r = 0; r < step.ranks.size(); ++r) {
      members.push_back(units.batches.size());
      units.costs.push_back(step.costs[r]);
      units.batches.push_back(std::move(step.ranks[r]));
    }
    units.steps.push_back(std::move(members));
  }
}

// Each of `steps` rebuilt from its members, starting at step `first` of `units`.
void take_steps(BatchUnits& units, size_t first, std::vector<CostedStep>& steps) {
  for (size_t s = 0; s < steps.size(); ++s) {
    CostedStep& step = steps[s];
    step.ranks.clear();
    step.costs.clear();
    for (size_t k : units.steps[first + s]) {
      step.ranks.push_back(std::move(units.batches[k]));
      step.costs.push_back(units.costs[k]);
    }
  }
}

bool every_step_level(const std::vector<CostedStep>& steps, double level_enough) {
  return std::all_of(steps.begin(), steps.end(), [&](const CostedStep& step) {
    double dearest = 0, sum = 0;
    for (double c : step.costs) {
      dearest = std::max(dearest, c);
      sum += c;
    }
    return step_imbalance(dearest, sum, step.costs.size()) <= level_enough;
  });
}

}  // namespace

size_t split_across_windows(std::vector<CostedStep>& held, std::vector<CostedStep>& fresh,
                            const CrossWindowSplitOptions& options) {
  if (held.empty() || fresh.empty()) return 0;
  if (every_step_level(held, options.level_enough) && every_step_level(fresh, options.level_enough))
    return 0;
  BatchUnits units;
  add_steps(held, units);
  add_steps(fresh, units);
  const size_t splits = split_in_cost_order(units.costs, units.steps);
  take_steps(units, 0, held);
  take_steps(units, held.size(), fresh);
  return splits;
}

}  // namespace evenfeed
