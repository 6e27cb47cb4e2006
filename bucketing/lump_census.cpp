#include "bucketing/lump_census.h"

#include <algorithm>

namespace evenfeed {

// WindowPlanner::lump_level where this is not negative.
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

LumpSpread plan_lump_spread(const LumpCensus& census, const CostModel& cost, size_t world_size) {
  uint64_t count = 0;
  for (uint64_t c : census.counts) count += c;
  const uint64_t W = world_size, whole = count / W * W;
  if (whole == 0) return {};
  // The lumps dearest first, W at a time, read off the counts without listing them:
  // the runs' worst step and their time; spread, every whole step costs the dearest
  // lump and stands below it by the mean shortfall. `reserve` is the cost of the first
  // lump after the whole steps.
  double top = 0, worst = 1, runs_time = 0, shortfall = 0, reserve = 0;
  double run_sum = 0, run_head = 0;
  uint64_t taken = 0;
  for (size_t k = census.counts.size(); k-- > 0 && reserve == 0;) {
    if (census.counts[k] == 0) continue;
    const double c = cost.per_sample(census.shortest + k);
    if (top == 0) top = c;
    for (uint64_t left = census.counts[k]; left > 0;) {
      if (taken == whole) {
        reserve = c;
        break;
      }
      if (taken % W == 0) run_head = c;
      const uint64_t n = std::min(left, W - taken % W);  // into the current run
      run_sum += static_cast<double>(n) * c;
      taken += n;
      left -= n;
      if (taken % W == 0) {
        worst = std::max(worst, run_head * static_cast<double>(W) / run_sum);
        runs_time += run_head;
        shortfall += static_cast<double>(W) * top - run_sum;
        run_sum = 0;
      }
    }
  }
  const double spread_time = static_cast<double>(whole / W) * top;
  const double epoch_time = census.total_cost / static_cast<double>(W);
  if (worst <= kSpreadAbove || spread_time - runs_time > kSpreadTimeShare * epoch_time) return {};
  const double mean_share = 1 - shortfall / (static_cast<double>(whole) * top);
  return {.most_ratio = (1 + kSpreadMargin) / mean_share, .reserve_cost = reserve};
}

}  // namespace evenfeed
