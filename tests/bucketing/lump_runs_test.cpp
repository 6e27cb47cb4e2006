// plan_lump_runs and plan_fluid_runs against exhaustive searches over every way of
// cutting the lumps into runs, and swap_to_level on steps whose balance one swap can or
// cannot improve.
#include "bucketing/lump_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "tests/support/random_steps.h"

namespace evenfeed {
namespace {

// The reference: every sequence of run lengths, each step a run of the next lumps and
// the next partners; the least worst max/mean (infinity when none is complete).
double exhaustive_worst(const std::vector<double>& lumps, const std::vector<double>& partners,
                        size_t W) {
  std::function<double(size_t, size_t)> best = [&](size_t i, size_t used) {
    if (i == lumps.size()) return 1.0;
    double out = std::numeric_limits<double>::infinity();
    for (size_t run = 1; run <= W && i + run <= lumps.size(); ++run) {
      if (used + W - run > partners.size()) continue;
      double sum = 0, dearest = lumps[i];
      for (size_t k = i; k < i + run; ++k) sum += lumps[k];
      for (size_t k = used; k < used + W - run; ++k) {
        sum += partners[k];
        dearest = std::max(dearest, partners[k]);
      }
      const double ratio = dearest * static_cast<double>(W) / sum;
      out = std::min(out, std::max(ratio, best(i + run, used + W - run)));
    }
    return out;
  };
  return best(0, 0);
}

// Uniform doubles in [0, 1) from a 64-bit linear congruential generator.
using testing::Lcg;

// `n` costs drawn uniformly from [low, low + span), dearest first.
std::vector<double> dearest_first(Lcg& uniform, size_t n, double low, double span) {
  std::vector<double> costs(n);
  for (double& c : costs) c = low + span * uniform();
  std::sort(costs.rbegin(), costs.rend());
  return costs;
}

double worst_of(const std::vector<double>& costs, const std::vector<std::vector<size_t>>& steps) {
  double worst = 1;
  for (const auto& step : steps) {
    double sum = 0, dearest = 0;
    for (size_t k : step) {
      sum += costs[k];
      dearest = std::max(dearest, costs[k]);
    }
    worst = std::max(worst, dearest * static_cast<double>(step.size()) / sum);
  }
  return worst;
}

TEST(LumpRuns, MatchesAnExhaustiveSearch) {
  Lcg uniform{12345};
  for (int trial = 0; trial < 200; ++trial) {
    const size_t W = 2 + trial % 4, n = 1 + trial % 11, m = trial % 17;
    const std::vector<double> lumps = dearest_first(uniform, n, 0.5, 0.5);
    const std::vector<double> partners = dearest_first(uniform, m, 0.01, 0.6);
    const double expected = exhaustive_worst(lumps, partners, W);
    const auto runs = plan_lump_runs(lumps, partners, W);
    SCOPED_TRACE(::testing::Message()
                 << "trial " << trial << " W=" << W << " n=" << n << " m=" << m);
    if (expected == std::numeric_limits<double>::infinity()) {
      EXPECT_FALSE(runs.has_value());
      continue;
    }
    ASSERT_TRUE(runs.has_value());
    EXPECT_NEAR(runs->worst, expected, 1e-9);
    EXPECT_EQ(std::accumulate(runs->lumps_per_step.begin(), runs->lumps_per_step.end(), size_t{0}),
              n);
    for (size_t run : runs->lumps_per_step) {
      EXPECT_GE(run, 1u);
      EXPECT_LE(run, W);
    }
  }
}

// Nine lumps of the budget at eight ranks: cutting eight at a time leaves one lump with
// seven partners of half its cost (max/mean 1.78); five and four give 1.33.
TEST(LumpRuns, APlateauThatDoesNotDivideIsSpread) {
  const std::vector<double> lumps(9, 1.0), partners(40, 0.5);
  const auto runs = plan_lump_runs(lumps, partners, 8);
  ASSERT_TRUE(runs.has_value());
  EXPECT_NEAR(runs->worst, 8.0 / 6.0, 1e-9);
  std::vector<size_t> sorted = runs->lumps_per_step;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<size_t>{4, 5}));
}

TEST(LumpRuns, WithoutPartnersLumpsAreCutWAtATimeOrNotAtAll) {
  const std::vector<double> lumps = {1.0, 0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6};
  const auto runs = plan_lump_runs(lumps, {}, 4);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(runs->lumps_per_step, (std::vector<size_t>{4, 4}));
  // Two lumps and one partner cannot make a step of four.
  EXPECT_FALSE(plan_lump_runs(std::vector<double>{1.0, 1.0}, std::vector<double>{0.5}, 4));
}

// Two plateau lumps and two light partners beside a step of mid-cost batches: swapping
// a light batch for a mid one levels the worse step; the second swap would not.
TEST(LumpRuns, SwapsLowerTheWorstStepAndKeepEveryBatch) {
  const std::vector<double> costs = {1.0, 1.0, 0.2, 0.2, 0.6, 0.6, 0.6, 0.6};
  std::vector<std::vector<size_t>> steps = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  const double before = worst_of(costs, steps);
  swap_to_level(costs, steps, 10);
  EXPECT_LT(worst_of(costs, steps), before);
  EXPECT_NEAR(worst_of(costs, steps), 4.0 / 2.8, 1e-9);
  std::vector<size_t> all;
  for (const auto& step : steps) {
    EXPECT_EQ(step.size(), 4u);
    all.insert(all.end(), step.begin(), step.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// The least worst max/mean of steps with these runs of `lumps` when fluid is shared out
// among their other ranks, at most `fluid` in all: for a ratio R, a step of dearest c
// and mass S needs W c / R - S (none if that is negative; impossible above (W - run) c,
// or at all when run = W), found by bisection on R.
double fluid_worst_for(const std::vector<double>& lumps, const std::vector<size_t>& runs,
                       double fluid, size_t W) {
  auto needs = [&](double ratio) {
    double total = 0;
    for (size_t i = 0, s = 0; s < runs.size(); i += runs[s++]) {
      double mass = 0;
      for (size_t k = i; k < i + runs[s]; ++k) mass += lumps[k];
      const double wanted = static_cast<double>(W) * lumps[i] / ratio - mass;
      if (wanted <= 0) continue;
      if (runs[s] == W || wanted > static_cast<double>(W - runs[s]) * lumps[i])
        return std::numeric_limits<double>::infinity();
      total += wanted;
    }
    return total;
  };
  double lo = 1, hi = static_cast<double>(W);
  if (needs(lo) <= fluid) return 1.0;
  for (int k = 0; k < 100; ++k) (needs(0.5 * (lo + hi)) <= fluid ? hi : lo) = 0.5 * (lo + hi);
  return hi;
}

// The reference for plan_fluid_runs: the best over every sequence of run lengths.
double exhaustive_fluid_worst(const std::vector<double>& lumps, double fluid, size_t W) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<size_t> runs;
  std::function<void(size_t)> walk = [&](size_t i) {
    if (i == lumps.size()) {
      best = std::min(best, fluid_worst_for(lumps, runs, fluid, W));
      return;
    }
    for (size_t run = 1; run <= W && i + run <= lumps.size(); ++run) {
      runs.push_back(run);
      walk(i + run);
      runs.pop_back();
    }
  };
  walk(0);
  return best;
}

TEST(FluidRuns, MatchesAnExhaustiveSearch) {
  Lcg uniform{777};
  for (int trial = 0; trial < 200; ++trial) {
    const size_t W = 2 + trial % 4, n = 1 + trial % 9;
    const std::vector<double> lumps = dearest_first(uniform, n, 0.4, 0.6);
    const double fluid = 3.0 * uniform() * static_cast<double>(n);
    const auto runs = plan_fluid_runs(lumps, fluid, W);
    ASSERT_TRUE(runs.has_value()) << "trial " << trial;
    const double expected = exhaustive_fluid_worst(lumps, fluid, W);
    EXPECT_NEAR(runs->worst, expected, 2e-3 * expected) << "trial " << trial;
    // The runs cover the lumps, within W each, and need no more fluid than there is.
    EXPECT_EQ(std::accumulate(runs->lumps_per_step.begin(), runs->lumps_per_step.end(), size_t{0}),
              n);
    EXPECT_LE(runs->fluid_used, fluid * (1 + 1e-9));
    // Each step, its pieces included, is within the worst reported.
    for (size_t i = 0, s = 0; s < runs->lumps_per_step.size(); i += runs->lumps_per_step[s++]) {
      const size_t run = runs->lumps_per_step[s];
      ASSERT_GE(run, 1u);
      ASSERT_LE(run, W);
      double mass = static_cast<double>(W - run) * runs->piece_cost[s];
      for (size_t k = i; k < i + run; ++k) mass += lumps[k];
      EXPECT_LE(runs->piece_cost[s], lumps[i] * (1 + 1e-9));
      EXPECT_LE(lumps[i] * static_cast<double>(W) / mass, runs->worst * (1 + 1e-9));
    }
  }
}

// A lump of the budget and one of 0.6 at two ranks. With little fluid they share a
// step (max/mean 2 / 1.6); with enough, each gets a step and a piece to match it.
TEST(FluidRuns, ShareAStepOrTakeFluidToMeasure) {
  const std::vector<double> lumps = {1.0, 0.6};
  const auto scarce = plan_fluid_runs(lumps, 0.4, 2);
  ASSERT_TRUE(scarce.has_value());
  EXPECT_EQ(scarce->lumps_per_step, (std::vector<size_t>{2}));
  EXPECT_NEAR(scarce->worst, 1.25, 2e-3);
  EXPECT_EQ(scarce->fluid_used, 0.0);
  const auto ample = plan_fluid_runs(lumps, 2.0, 2);
  ASSERT_TRUE(ample.has_value());
  EXPECT_EQ(ample->lumps_per_step, (std::vector<size_t>{1, 1}));
  EXPECT_NEAR(ample->worst, 1.0, 2e-3);
  EXPECT_NEAR(ample->piece_cost[0], 1.0, 2e-3);
  EXPECT_NEAR(ample->piece_cost[1], 0.6, 2e-3);
}

// Every way of cutting `costs` (dearest first) into runs of 1 to W, each completed
// with W - run pieces at its dearest: the least total excess (sum of max/mean - 1)
// among those whose pieces take at most `mass` (infinity when none does).
double exhaustive_coarse_excess(const std::vector<double>& costs, size_t W, double mass) {
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t, double, double)> walk = [&](size_t i, double excess, double used) {
    if (used > mass * (1 + 1e-12)) return;
    if (i == costs.size()) {
      best = std::min(best, excess);
      return;
    }
    double sum = 0;
    for (size_t run = 1; run <= W && i + run <= costs.size(); ++run) {
      sum += costs[i + run - 1];
      const double pieces = static_cast<double>(W - run) * costs[i];
      const double ratio = static_cast<double>(W) * costs[i] / (sum + pieces);
      walk(i + run, excess + ratio - 1, used + pieces);
    }
  };
  walk(0, 0, 0);
  return best;
}

// With fillers for every run, the least excess is the exhaustive one; with fewer, the
// runs never take more than there is, and are the exhaustive best at the mass they
// take (a Lagrangian optimum is optimal at its own mass; the price found may leave
// some of the fillers unused, never take more).
TEST(CoarseRuns, MatchExhaustiveSearchAndStayWithinTheFillers) {
  Lcg uniform{4242};
  for (int trial = 0; trial < 200; ++trial) {
    const size_t W = 2 + trial % 4, n = 1 + trial % 10;
    const std::vector<double> costs = dearest_first(uniform, n, 0.3, 0.7);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " W=" << W << " n=" << n);
    const auto ample = plan_coarse_runs(costs, 1e9, W, 2.0);
    ASSERT_TRUE(ample.has_value());
    EXPECT_NEAR(ample->excess, exhaustive_coarse_excess(costs, W, 1e9), 1e-9);
    const double mass = uniform() * ample->filler_used;
    const auto scarce = plan_coarse_runs(costs, mass, W, 2.0);
    if (!scarce) {
      // Only when even the runs that need the fewest pieces need more.
      EXPECT_EQ(exhaustive_coarse_excess(costs, W, mass), std::numeric_limits<double>::infinity());
      continue;
    }
    EXPECT_LE(scarce->filler_used, mass * (1 + 1e-9));
    EXPECT_NEAR(scarce->excess, exhaustive_coarse_excess(costs, W, scarce->filler_used), 1e-9);
    EXPECT_EQ(std::accumulate(scarce->batches_per_step.begin(), scarce->batches_per_step.end(),
                              size_t{0}),
              n);
  }
}

// Batches dearer than any fillers can reach take no pieces: W of them to a step, or
// the last run.
TEST(CoarseRuns, RunsAboveTheFillersReachAreWholeSteps) {
  const std::vector<double> costs = {1.0, 0.99, 0.98, 0.97, 0.96, 0.5, 0.49};
  const auto runs = plan_coarse_runs(costs, 100, 4, 0.9);
  ASSERT_TRUE(runs.has_value());
  ASSERT_FALSE(runs->batches_per_step.empty());
  EXPECT_EQ(runs->batches_per_step[0], 4u);
  // The fifth batch (0.96) cannot be completed by fillers: it starts a step of four.
  EXPECT_EQ(runs->batches_per_step[1], 3u);
}

TEST(LumpRuns, SwapsLeaveALevelPlanAlone) {
  const std::vector<double> costs = {1.0, 1.0, 0.5, 0.5};
  std::vector<std::vector<size_t>> steps = {{0, 1}, {2, 3}};
  swap_to_level(costs, steps, 10);
  EXPECT_EQ(steps, (std::vector<std::vector<size_t>>{{0, 1}, {2, 3}}));
}

// The reference for swap_to_level's pruned search: every batch of the worst step
// against every dearer batch of every other step, each step's max/mean recomputed from
// its costs; the first swap that lowers the larger of the two by more than 1e-12 below
// the best so far is the one made, as swap_to_level promises.
double max_over_mean(const std::vector<double>& costs, const std::vector<size_t>& step) {
  double dearest = 0, sum = 0;
  for (size_t id : step) {
    dearest = std::max(dearest, costs[id]);
    sum += costs[id];
  }
  return sum > 0 ? dearest * static_cast<double>(step.size()) / sum : 1.0;
}

void swap_to_level_by_scan(const std::vector<double>& costs,
                           std::vector<std::vector<size_t>>& steps, size_t max_swaps) {
  for (size_t swaps = 0; swaps < max_swaps && !steps.empty(); ++swaps) {
    size_t worst = 0;
    for (size_t s = 0; s < steps.size(); ++s)
      if (max_over_mean(costs, steps[s]) > max_over_mean(costs, steps[worst])) worst = s;
    const double now = max_over_mean(costs, steps[worst]);
    double best = now;
    size_t best_x = 0, best_t = 0, best_y = 0;
    for (size_t x = 0; x < steps[worst].size(); ++x) {
      for (size_t t = 0; t < steps.size(); ++t) {
        for (size_t y = 0; t != worst && y < steps[t].size(); ++y) {
          if (costs[steps[t][y]] <= costs[steps[worst][x]]) continue;
          std::vector<size_t> a = steps[worst], b = steps[t];
          std::swap(a[x], b[y]);
          const double after = std::max(max_over_mean(costs, a), max_over_mean(costs, b));
          if (after < best - 1e-12)
            std::tie(best, best_x, best_t, best_y) = std::tie(after, x, t, y);
        }
      }
    }
    if (best >= now - 1e-12) return;
    std::swap(steps[worst][best_x], steps[best_t][best_y]);
  }
}

// Steps of W consecutive costs, swapped by swap_to_level and by the full scan: the same
// swaps, the same batches by position.
void expect_the_full_scans_swaps(const std::vector<double>& costs, size_t W, int round) {
  std::vector<std::vector<size_t>> steps(costs.size() / W);
  for (size_t k = 0; k < costs.size(); ++k) steps[k / W].push_back(k);
  std::vector<std::vector<size_t>> expected = steps;
  swap_to_level(costs, steps, 4 * W);
  swap_to_level_by_scan(costs, expected, 4 * W);
  EXPECT_EQ(steps, expected) << "round " << round;
}

// Random lumpy steps (a few dear batches among cheap ones, with ties): the pruned search
// makes exactly the swaps of the full one.
TEST(LumpRuns, SwapsAreThoseOfTheFullScan) {
  Lcg uniform{12345};
  for (int round = 0; round < 300; ++round) {
    const auto [W, step_count, costs] = testing::lumpy_costs(uniform);
    expect_the_full_scans_swaps(costs, W, round);
  }
}

// Batches of a few costs only, as at thousands of ranks whose samples are cut to a
// small budget: swap_to_level scans the first batch of each cost in a step (the others
// offer the same swaps), and still makes exactly the full scan's swaps.
TEST(LumpRuns, SwapsAreThoseOfTheFullScanWhenBatchesShareCosts) {
  Lcg uniform{2026};
  const double few[] = {0.125, 0.25, 0.5, 0.75, 1.0};
  for (int round = 0; round < 300; ++round) {
    const size_t W = static_cast<size_t>(2 + uniform() * 14);
    const size_t step_count = static_cast<size_t>(2 + uniform() * 5);
    std::vector<double> costs(W * step_count);
    for (double& c : costs)
      c = uniform() < 0.9 ? few[static_cast<size_t>(uniform() * 5)] : uniform();
    expect_the_full_scans_swaps(costs, W, round);
  }
}

// Wider steps of long-tailed whole-number costs (many distinct, some tied), dealt in
// cost order as a window's steps are, ascending or descending, or shuffled: the search
// that bisects each partner's costs for those that may beat the best found makes
// exactly the full scan's swaps.
TEST(LumpRuns, SwapsAreThoseOfTheFullScanOnWideLongTailedSteps) {
  Lcg uniform{4096};
  for (int round = 0; round < 24; ++round) {
    const size_t W = static_cast<size_t>(16 + uniform() * 24);
    const size_t step_count = static_cast<size_t>(2 + uniform() * 2);
    std::vector<double> costs(W * step_count);
    for (double& c : costs) c = std::floor(8.0 / std::pow(1.0 - uniform(), 1.2));
    if (round % 3 == 0) std::sort(costs.begin(), costs.end());
    if (round % 3 == 1) std::sort(costs.rbegin(), costs.rend());
    expect_the_full_scans_swaps(costs, W, round);
  }
}

// Twelve lumps at the budget and four below it at four ranks: runs leave the four
// together at 1.141; dealt, each step holds one of them beside three at the budget.
TEST(DealLumpsEvenly, SharesThePlateauAndScattersTheSparseLumps) {
  const std::vector<double> costs = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.9, 0.8, 0.75, 0.7};
  const auto steps = deal_lumps_evenly(costs, 4);
  ASSERT_EQ(steps.size(), 4u);
  for (const auto& step : steps) {
    ASSERT_EQ(step.size(), 4u);
    EXPECT_EQ(std::count_if(step.begin(), step.end(), [&](size_t k) { return costs[k] < 1; }), 1);
  }
  EXPECT_NEAR(worst_of(costs, steps), 4 / 3.7, 1e-12);
}

// Shortfalls dealt largest first: five at the budget and 0.9, 0.8, 0.7 at four ranks
// make two steps each short by 0.3 (dealt dearest first instead, 1.0 + 0.9 beside
// three at the budget, and 0.8 + 0.7 beside two: 1.026 and 1.143).
TEST(DealLumpsEvenly, LargestShortfallFirstLevelsTheSteps) {
  const std::vector<double> costs = {1, 1, 1, 1, 1, 0.9, 0.8, 0.7};
  const auto steps = deal_lumps_evenly(costs, 4);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NEAR(worst_of(costs, steps), 4 / 3.7, 1e-12);
}

// Every lump in exactly one step of W, for random costs and world sizes. (Not always
// more level than runs W at a time: two at 0.9 and 0.6 beside two at the budget, at two
// ranks, run together at 1.2 and dealt at 1.25. The planner keeps whichever end is more
// level, FinishWay::deal_lumps.)
TEST(DealLumpsEvenly, EveryLumpOnceInStepsOfW) {
  Lcg uniform{7};
  for (size_t W : {2, 3, 8, 64}) {
    for (int trial = 0; trial < 20; ++trial) {
      const size_t steps_wanted = 1 + static_cast<size_t>(uniform() * 8);
      std::vector<double> costs(static_cast<size_t>(uniform() * W * steps_wanted), 1.0);
      const std::vector<double> sparse =
          dearest_first(uniform, W * steps_wanted - costs.size(), 0.6, 0.4);
      costs.insert(costs.end(), sparse.begin(), sparse.end());
      const auto steps = deal_lumps_evenly(costs, W);
      std::vector<size_t> seen;
      for (const auto& step : steps) {
        EXPECT_EQ(step.size(), W);
        seen.insert(seen.end(), step.begin(), step.end());
      }
      std::sort(seen.begin(), seen.end());
      std::vector<size_t> all(costs.size());
      std::iota(all.begin(), all.end(), 0);
      EXPECT_EQ(seen, all) << "W " << W;
    }
  }
}

}  // namespace
}  // namespace evenfeed
