#include "bucketing/lump_census.h"

#include <algorithm>

namespace evenfeed {

// Matches WindowPlanner::lump_level under a token bound.
double unmatched_lump_level(const BucketingOptions& options) {
  const uint64_t bound = options.max_batch_tokens;
  if (bound == 0) return -1;
  const double budget = options.cost.budget(options.tokens_per_rank);
  const double pair = 2 * options.cost.per_sample(bound / 2);
  return pair < budget ? pair : -1;
}

LumpCensus take_lump_census(const LengthSource& lengths, const BucketingOptions& options) {
  LumpCensus census;
  const double level = unmatched_lump_level(options);
  if (level < 0) return census;
  const uint64_t budget = options.tokens_per_rank;
  // The shortest unmatched length: costs rise with length, so search up from half the
  // bound (a sample no longer than that can share a batch).
  uint64_t shortest = std::min(options.max_batch_tokens / 2, budget) + 1;
  while (shortest <= budget && options.cost.per_sample(shortest) <= level) ++shortest;
  if (shortest > budget) return census;
  census.shortest = shortest;
  census.counts.assign(budget - shortest + 1, 0);
  for (uint64_t id = 0; id < lengths.size(); ++id) {
    const uint64_t length = std::min(lengths.length(id), budget);
    census.total_cost += options.cost.per_sample(length);
    if (length >= shortest) ++census.counts[length - shortest];
  }
  return census;
}

// The census's lumps' costs, dearest first.
static std::vector<double> costs_dearest_first(const LumpCensus& census, const CostModel& cost) {
  std::vector<double> costs;
  for (size_t k = census.counts.size(); k-- > 0;)
    costs.insert(costs.end(), census.counts[k], cost.per_sample(census.shortest + k));
  return costs;
}

LumpSpread plan_lump_spread(const LumpCensus& census, const CostModel& cost, size_t world_size) {
  const std::vector<double> costs = costs_dearest_first(census, cost);
  const size_t W = world_size, whole = costs.size() / W * W;
  if (whole == 0) return {};
  // The runs W at a time: their worst step and their time; spread, every whole step
  // costs the dearest lump, and stands below it by the mean shortfall.
  const double top = costs.front();
  double worst = 1, runs_time = 0, shortfall = 0;
  for (size_t i = 0; i < whole; i += W) {
    double sum = 0;
    for (size_t j = i; j < i + W; ++j) sum += costs[j];
    worst = std::max(worst, costs[i] * static_cast<double>(W) / sum);
    runs_time += costs[i];
    shortfall += static_cast<double>(W) * top - sum;
  }
  const double spread_time = static_cast<double>(whole / W) * top;
  const double epoch_time = census.total_cost / static_cast<double>(W);
  if (worst <= kSpreadAbove || spread_time - runs_time > kSpreadTimeShare * epoch_time) return {};
  const double mean_share = 1 - shortfall / (static_cast<double>(whole) * top);
  return {.most_ratio = (1 + kSpreadMargin) / mean_share,
          .reserve_cost = whole < costs.size() ? costs[whole] : 0};
}

}  // namespace evenfeed
