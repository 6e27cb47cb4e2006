#include "bucketing/lump_runs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "bucketing/cost_model.h"

namespace evenfeed {
namespace {

// The best placement of the lumps from some point on: the worst step's max/mean, the
// sum of max/mean - 1 over its steps, and the first step's run length.
struct Placement {
  double worst = std::numeric_limits<double>::infinity();
  double excess = 0;
  size_t run = 0;
};

bool better(const Placement& a, const Placement& b) {
  const double tolerance = 1e-9 * std::max(a.worst, 1.0);
  if (a.worst < b.worst - tolerance) return true;
  return a.worst <= b.worst + tolerance && a.excess < b.excess;
}

std::vector<double> prefix_sums(std::span<const double> costs) {
  std::vector<double> sums(costs.size() + 1, 0.0);
  for (size_t k = 0; k < costs.size(); ++k) sums[k + 1] = sums[k] + costs[k];
  return sums;
}

}  // namespace

std::optional<LumpRuns> plan_lump_runs(std::span<const double> lumps,
                                       std::span<const double> partners, size_t world_size) {
  const size_t n = lumps.size(), m = partners.size(), W = world_size;
  if (n == 0 || W == 0) return LumpRuns{};
  const std::vector<double> lump_sum = prefix_sums(lumps), partner_sum = prefix_sums(partners);
  // State (i, k): i lumps placed in k steps, so k W - i partners used. Every step takes
  // 1 to W lumps, so ceil(i / W) <= k <= i, and k W - i <= m.
  auto first_k = [&](size_t i) { return (i + W - 1) / W; };
  auto last_k = [&](size_t i) { return std::min(i, (m + i) / W); };
  std::vector<std::vector<Placement>> best(n + 1);
  for (size_t i = n + 1; i-- > 0;) {
    if (last_k(i) < first_k(i)) continue;
    best[i].resize(last_k(i) - first_k(i) + 1);
    for (size_t k = first_k(i); k <= last_k(i); ++k) {
      Placement& here = best[i][k - first_k(i)];
      if (i == n) {
        here = {1.0, 0.0, 0};
        continue;
      }
      const size_t used = k * W - i;
      for (size_t run = std::min(W, n - i); run >= 1; --run) {
        const size_t fill = W - run;
        if (used + fill > m) break;  // shorter runs need more partners still
        const size_t next_k = k + 1;
        if (best[i + run].empty() || next_k < first_k(i + run) || next_k > last_k(i + run))
          continue;
        const Placement& rest = best[i + run][next_k - first_k(i + run)];
        if (rest.worst == std::numeric_limits<double>::infinity()) continue;
        const double mass =
            lump_sum[i + run] - lump_sum[i] + partner_sum[used + fill] - partner_sum[used];
        const double dearest = fill > 0 ? std::max(lumps[i], partners[used]) : lumps[i];
        const double ratio = step_imbalance(dearest, mass, W);
        const Placement candidate{std::max(ratio, rest.worst), ratio - 1 + rest.excess, run};
        if (better(candidate, here)) here = candidate;
      }
    }
  }
  if (best[0].empty() || best[0][0].worst == std::numeric_limits<double>::infinity())
    return std::nullopt;
  LumpRuns out;
  out.worst = best[0][0].worst;
  for (size_t i = 0, k = 0; i < n; ++k) {
    const size_t run = best[i][k - first_k(i)].run;
    out.lumps_per_step.push_back(run);
    i += run;
  }
  return out;
}

namespace {

// The least fluid that places lumps[i..] in steps of max/mean at most `ratio`, for
// every i (infinity where none does), with the first run of each.
struct FluidPlan {
  std::vector<double> fluid;
  std::vector<size_t> run;
};

// Fluid a step of lumps [i, i + run) needs to come within `ratio`: its W - run other
// ranks get pieces of equal cost, no dearer than its dearest lump. Negative when no
// pieces can (the run alone is too uneven, or too light even with pieces at the top).
double fluid_needed(std::span<const double> lumps, const std::vector<double>& sums, size_t i,
                    size_t run, size_t W, double ratio) {
  const double dearest = lumps[i], mass = sums[i + run] - sums[i];
  const double wanted = static_cast<double>(W) * dearest / ratio - mass;
  if (wanted <= 0) return 0;
  if (run == W || wanted > static_cast<double>(W - run) * dearest) return -1;
  return wanted;
}

FluidPlan plan_fluid_at(std::span<const double> lumps, const std::vector<double>& sums, size_t W,
                        double ratio) {
  const size_t n = lumps.size();
  FluidPlan plan{std::vector<double>(n + 1, std::numeric_limits<double>::infinity()),
                 std::vector<size_t>(n + 1, 0)};
  plan.fluid[n] = 0;
  for (size_t i = n; i-- > 0;) {
    for (size_t run = 1; run <= std::min(W, n - i); ++run) {
      const double need = fluid_needed(lumps, sums, i, run, W, ratio);
      if (need < 0) continue;
      const double total = need + plan.fluid[i + run];
      if (total < plan.fluid[i]) {
        plan.fluid[i] = total;
        plan.run[i] = run;
      }
    }
  }
  return plan;
}

}  // namespace

std::optional<FluidRuns> plan_fluid_runs(std::span<const double> lumps, double fluid_mass,
                                         size_t world_size) {
  const size_t n = lumps.size(), W = world_size;
  if (n == 0 || W == 0) return FluidRuns{};
  const std::vector<double> sums = prefix_sums(lumps);
  // Any placement is within W (one lump per step, the rest empty); bisect below it.
  double lo = 1, hi = static_cast<double>(W);
  if (plan_fluid_at(lumps, sums, W, hi).fluid[0] > fluid_mass) return std::nullopt;
  while (hi - lo > 1e-3 * lo) {
    const double mid = 0.5 * (lo + hi);
    (plan_fluid_at(lumps, sums, W, mid).fluid[0] <= fluid_mass ? hi : lo) = mid;
  }
  const FluidPlan plan = plan_fluid_at(lumps, sums, W, hi);
  FluidRuns out;
  out.worst = hi;
  out.fluid_used = plan.fluid[0];
  for (size_t i = 0; i < n;) {
    const size_t run = plan.run[i];
    const double need = fluid_needed(lumps, sums, i, run, W, hi);
    out.lumps_per_step.push_back(run);
    out.piece_cost.push_back(run < W ? need / static_cast<double>(W - run) : 0.0);
    i += run;
  }
  return out;
}

namespace {

// The runs of coarse batches that least cost excess + price x filler mass, from every
// batch on: each start's least cost, the filler mass and excess of that choice, and
// its first run.
struct PricedRuns {
  std::vector<double> cost, mass, excess;
  std::vector<size_t> run;
};

PricedRuns plan_coarse_at(std::span<const double> costs, const std::vector<double>& sums, size_t W,
                          double reach, double price) {
  const size_t n = costs.size();
  PricedRuns p{std::vector<double>(n + 1, std::numeric_limits<double>::infinity()),
               std::vector<double>(n + 1, 0), std::vector<double>(n + 1, 0),
               std::vector<size_t>(n + 1, 0)};
  p.cost[n] = 0;
  for (size_t i = n; i-- > 0;) {
    const double dearest = costs[i];
    const bool fillable = dearest <= reach;
    for (size_t run = 1; run <= std::min(W, n - i); ++run) {
      if (!fillable && run < W && i + run < n) continue;
      const double pieces = fillable ? static_cast<double>(W - run) * dearest : 0.0;
      const double mass = sums[i + run] - sums[i] + pieces;
      const double excess = (mass > 0 ? static_cast<double>(W) * dearest / mass : 1.0) - 1;
      const double total = excess + price * pieces + p.cost[i + run];
      if (total < p.cost[i]) {
        p.cost[i] = total;
        p.mass[i] = pieces + p.mass[i + run];
        p.excess[i] = excess + p.excess[i + run];
        p.run[i] = run;
      }
    }
  }
  return p;
}

}  // namespace

std::optional<CoarseRuns> plan_coarse_runs(std::span<const double> costs, double filler_mass,
                                           size_t world_size, double reach) {
  const size_t n = costs.size(), W = world_size;
  if (n == 0 || W == 0) return CoarseRuns{};
  const std::vector<double> sums = prefix_sums(costs);
  // The price of filler mass, in excess per unit of the dearest batch's cost: from
  // none (every run as level as pieces can make it) up to one at which the mass all
  // but alone counts; bisected on a log scale for the least price whose runs fit.
  const double unit = costs[0] > 0 ? costs[0] : 1.0;
  auto at = [&](double price) { return plan_coarse_at(costs, sums, W, reach, price / unit); };
  PricedRuns chosen = at(0);
  if (chosen.mass[0] > filler_mass) {
    double lo = 1e-6, hi = 1e3;
    chosen = at(hi);
    if (chosen.mass[0] > filler_mass) return std::nullopt;
    for (int k = 0; k < 16; ++k) {  // to within 0.05% of the price
      const double mid = std::sqrt(lo * hi);
      PricedRuns runs = at(mid);
      if (runs.mass[0] <= filler_mass) {
        hi = mid;
        chosen = std::move(runs);
      } else {
        lo = mid;
      }
    }
  }
  CoarseRuns out;
  out.filler_used = chosen.mass[0];
  out.excess = chosen.excess[0];
  for (size_t i = 0; i < n; i += chosen.run[i]) out.batches_per_step.push_back(chosen.run[i]);
  return out;
}

namespace {

struct StepShape {
  double dearest = 0, second = 0, sum = 0;
};

// The positions of a step's batches that cost what no earlier batch of the step costs,
// in order, kept as batches are swapped in and out. A batch costing what an earlier one
// of its step costs offers exactly the swaps the earlier one offered, each as good to
// the last bit, and best_swap keeps the first of equals (the best so far only falls, and
// a later swap must beat it by 1e-12), so it never takes one: scanning only the first of
// each cost makes the same swaps. Where thousands of ranks' batches cost a few dozen
// values (samples cut to a small budget, documents at the budget) it scans those few per
// step, not thousands (`shape_pareto` at 4,096 ranks, 64 tokens: more than five minutes
// before); kept up to date as batches are swapped, since swap_to_level makes up to 4 W
// swaps.
class FirstOfEachCost {
 public:
  FirstOfEachCost(std::span<const double> costs, const std::vector<size_t>& step)
      : costs_(costs), step_(&step) {
    std::vector<std::pair<double, size_t>> by_cost;
    for (size_t k = 0; k < step.size(); ++k) by_cost.emplace_back(costs[step[k]], k);
    std::sort(by_cost.begin(), by_cost.end());  // equal costs by position
    for (size_t k = 0; k < by_cost.size(); ++k)
      if (k == 0 || by_cost[k].first != by_cost[k - 1].first) by_cost_.push_back(by_cost[k]);
    for (const auto& [cost, position] : by_cost_) firsts_.push_back(position);
    std::sort(firsts_.begin(), firsts_.end());
  }
  // Position k, which cost `was`, now holds a batch costing `now` (the step already
  // changed): the first of `was` may move later, and k may become the first of `now`.
  // O(W) without allocating, as summing the step again is.
  void replace(size_t k, double was, double now) {
    const auto at_k = std::lower_bound(firsts_.begin(), firsts_.end(), k);
    if (at_k != firsts_.end() && *at_k == k) {
      firsts_.erase(at_k);
      const size_t next = find(was, k + 1);
      if (next < step_->size()) add(next);
      set_first_of(was, next);
    }
    const size_t first_now = find(now, 0);
    if (first_now == k) {
      if (const size_t later = find(now, k + 1); later < step_->size()) drop(later);
      add(k);
      set_first_of(now, k);
    }
  }
  // The first positions of each cost: ascending, and as (cost, position) by cost.
  const std::vector<size_t>& firsts() const { return firsts_; }
  const std::vector<std::pair<double, size_t>>& by_cost() const { return by_cost_; }

 private:
  // The first position from `from` on whose batch costs `cost` (the step's size if none).
  size_t find(double cost, size_t from) const {
    for (size_t j = from; j < step_->size(); ++j)
      if (costs_[(*step_)[j]] == cost) return j;
    return step_->size();
  }
  void add(size_t k) { firsts_.insert(std::lower_bound(firsts_.begin(), firsts_.end(), k), k); }
  void drop(size_t k) {
    const auto at = std::lower_bound(firsts_.begin(), firsts_.end(), k);
    if (at != firsts_.end() && *at == k) firsts_.erase(at);
  }
  // by_cost_'s entry for `cost` now at `position`; removed when that is the step's size.
  void set_first_of(double cost, size_t position) {
    auto at = std::lower_bound(by_cost_.begin(), by_cost_.end(), std::pair(cost, size_t{0}));
    const bool present = at != by_cost_.end() && at->first == cost;
    if (position == step_->size()) {
      if (present) by_cost_.erase(at);
    } else if (present) {
      at->second = position;
    } else {
      by_cost_.insert(at, {cost, position});
    }
  }

  std::span<const double> costs_;
  const std::vector<size_t>* step_;                 // the step, as it changes
  std::vector<size_t> firsts_;                      // positions, ascending
  std::vector<std::pair<double, size_t>> by_cost_;  // (cost, its first position), by cost
};

// A step as best_swap reads it.
struct StepView {
  StepShape shape;
  FirstOfEachCost firsts;
};

StepShape shape_of(std::span<const double> costs, const std::vector<size_t>& step) {
  StepShape shape;
  for (size_t id : step) {
    const double c = costs[id];
    shape.sum += c;
    if (c > shape.dearest) {
      shape.second = shape.dearest;
      shape.dearest = c;
    } else {
      shape.second = std::max(shape.second, c);
    }
  }
  return shape;
}

// max/mean of a step after one of its batches, costing `out`, is replaced by one costing
// `in`.
double ratio_after(const StepShape& s, double out, double in, size_t width) {
  const double rest = out == s.dearest ? s.second : s.dearest;
  return step_imbalance(std::max(rest, in), s.sum - out + in, width);
}

struct Swap {
  double after;    // the larger max/mean of the two steps after it
  size_t x, t, y;  // batch x of the worst step for batch y of step t
};

// The positions of the partner step `p`'s batches (firsts, as (cost, position) by
// cost) whose swap for the worst step `w`'s batch costing `out` may leave the larger
// max/mean of the two below `below`, in ascending order; a few more near the ends, none
// fewer. As the cost `in` brought in rises below the partner's dearest, the worst step's
// max/mean falls until `in` reaches its dearest other batch (`rest`) and rises past it,
// while the partner's rises (its sum falls, its dearest stays): the larger of the two
// falls until the partner's overtakes or `in` passes `rest`, then rises. The costs that
// beat `below` are thus one run about that turn, found by bisection on either side of
// it, with a margin of 1e-9 of `below` against rounding (about 1e-15 of it). The
// partner's dearest, whose swap lowers the partner's dearest too, is always included.
void positions_that_may_beat(const StepShape& w, double out, size_t width, const StepShape& p,
                             std::span<const std::pair<double, size_t>> partner,
                             size_t partner_width, double below, std::vector<size_t>& positions) {
  positions.clear();
  if (partner.empty() || partner.back().first <= out) return;
  const double rest = out == w.dearest ? w.second : w.dearest;
  auto after = [&](double in) {
    return std::max(ratio_after(w, out, in, width), ratio_after(p, in, out, partner_width));
  };
  // The last of the partner's costs is its dearest.
  auto cost_above = [](double c, const std::pair<double, size_t>& e) { return c < e.first; };
  const auto dearest = partner.end() - 1;
  const auto first = std::upper_bound(partner.begin(), dearest, out, cost_above);
  const auto turn = std::partition_point(first, dearest, [&](const auto& e) {
    return e.first <= rest &&
           ratio_after(p, e.first, out, partner_width) < ratio_after(w, out, e.first, width);
  });
  positions.push_back(dearest->second);
  // The run's least is beside the turn: when neither there beats `below`, none does,
  // and the run's ends need not be sought.
  const double widened = below + 1e-9 * std::abs(below);
  const bool beside_turn_beats = (turn != dearest && after(turn->first) < widened) ||
                                 (turn != first && after((turn - 1)->first) < widened);
  if (beside_turn_beats) {
    const auto from =
        std::partition_point(first, turn, [&](const auto& e) { return after(e.first) >= widened; });
    const auto to = std::partition_point(turn, dearest,
                                         [&](const auto& e) { return after(e.first) < widened; });
    for (auto e = from; e != to; ++e) positions.push_back(e->second);
  }
  std::sort(positions.begin(), positions.end());
}

// The swap of a batch of step `worst` with a dearer batch of another step that most
// lowers the larger max/mean of the two, when one lowers it by more than 1e-12 below
// the worst step's; the first found of equals. Steps are searched only where a swap
// could beat the best found (pruning only what cannot win, by more than rounding, keeps
// the choice the full scan's): the worst step's max/mean after the swap, as a function
// of the cost brought in, falls until it reaches the step's dearest other batch and
// rises past it; the partner step loses a batch dearer than the one it takes, so its
// sum falls and its dearest stays at least its second dearest and the batch taken.
// Each step's batches are scanned only at the first of each cost (FirstOfEachCost), and
// of those only the ones whose costs may beat the best found (positions_that_may_beat),
// in their order in the step.
std::optional<Swap> best_swap(std::span<const double> costs,
                              const std::vector<std::vector<size_t>>& steps,
                              const std::vector<StepView>& views, size_t worst) {
  const StepShape& w = views[worst].shape;
  const size_t width = steps[worst].size();
  const double now = step_imbalance(w.dearest, w.sum, width);
  std::optional<Swap> best;
  auto best_after = [&] { return best ? best->after : now; };
  std::vector<size_t> positions;
  for (size_t x : views[worst].firsts.firsts()) {
    const double out = costs[steps[worst][x]];
    const double rest = out == w.dearest ? w.second : w.dearest;
    if (ratio_after(w, out, std::max(rest, out), width) > best_after()) continue;
    for (size_t t = 0; t < steps.size(); ++t) {
      const StepShape& p = views[t].shape;
      if (t == worst || p.dearest <= out) continue;
      if (ratio_after(w, out, std::clamp(rest, out, p.dearest), width) > best_after()) continue;
      if (step_imbalance(std::max(p.second, out), p.sum, steps[t].size()) > best_after()) continue;
      positions_that_may_beat(w, out, width, p, views[t].firsts.by_cost(), steps[t].size(),
                              best_after() - 1e-12, positions);
      for (size_t y : positions) {
        const double in = costs[steps[t][y]];
        const double after =
            std::max(ratio_after(w, out, in, width), ratio_after(p, in, out, steps[t].size()));
        if (after < best_after() - 1e-12) best = Swap{after, x, t, y};
      }
    }
  }
  return best;
}

}  // namespace

std::vector<std::vector<size_t>> deal_lumps_evenly(std::span<const double> costs,
                                                   size_t world_size) {
  const size_t W = world_size, step_count = costs.size() / W;
  std::vector<std::vector<size_t>> steps(step_count);
  if (step_count == 0) return steps;
  const double top = costs.front();
  std::vector<double> shortfall(step_count, 0);
  // Below the dearest cost, the largest shortfall first (the cheapest lump: costs are
  // dearest first), each to the step short by the least so far that has room.
  for (size_t k = step_count * W; k-- > 0;) {
    if (costs[k] >= top) break;
    size_t target = step_count;
    for (size_t s = 0; s < step_count; ++s) {
      if (steps[s].size() == W) continue;
      if (target == step_count || shortfall[s] < shortfall[target]) target = s;
    }
    shortfall[target] += top - costs[k];
    steps[target].push_back(k);
  }
  // The lumps at the dearest cost fill the ranks left.
  size_t next = 0;
  for (std::vector<size_t>& step : steps)
    while (step.size() < W) step.push_back(next++);
  return steps;
}

void swap_to_level(std::span<const double> costs, std::vector<std::vector<size_t>>& steps,
                   size_t max_swaps) {
  if (steps.empty()) return;
  std::vector<StepView> views;
  for (const std::vector<size_t>& step : steps)
    views.push_back(StepView{shape_of(costs, step), FirstOfEachCost(costs, step)});
  auto ratio = [&](size_t s) {
    return step_imbalance(views[s].shape.dearest, views[s].shape.sum, steps[s].size());
  };
  for (size_t swaps = 0; swaps < max_swaps; ++swaps) {
    size_t worst = 0;
    for (size_t s = 1; s < steps.size(); ++s)
      if (ratio(s) > ratio(worst)) worst = s;
    const std::optional<Swap> swap = best_swap(costs, steps, views, worst);
    if (!swap) return;
    const double out = costs[steps[worst][swap->x]], in = costs[steps[swap->t][swap->y]];
    std::swap(steps[worst][swap->x], steps[swap->t][swap->y]);
    // Only the two steps of the swap change; their shapes summed again in order, as
    // best_swap's figures must be bit for bit those of the full scan.
    views[worst].shape = shape_of(costs, steps[worst]);
    views[worst].firsts.replace(swap->x, out, in);
    views[swap->t].shape = shape_of(costs, steps[swap->t]);
    views[swap->t].firsts.replace(swap->y, in, out);
  }
}

}  // namespace evenfeed
