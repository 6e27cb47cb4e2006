// WindowPlanner, third part: lumps, samples or batches that no batch of other samples
// can match, placed before a window's final cut in runs with partners (place_lumps):
// at the budget or evenly (place_runs), or cut to measure (place_fluid_runs). Called
// from finish() in window_planner_final.cpp; see window_planner.h for the sequence.
// Also the sparse lumps that whole groups of lumps take in as a window's coarse groups
// are formed (spread_sparse_lumps, called from plan_coarse; lump_census.h).
#include <algorithm>
#include <optional>

#include "bucketing/fluid_pieces.h"
#include "bucketing/lump_runs.h"
#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

// Partners for the lumps may also be cut for this many step counts beyond the fewest
// that hold the lumps (place_runs).
static constexpr size_t kMorePartnerSteps = 4;

// The most a batch of two or more samples can cost under the token bound (the budget
// when there is none): a sample costing more is a lump, matched only by other lumps.
double WindowPlanner::lump_level() const {
  const double level = unmatched_lump_level(options_);
  return level < 0 ? limits_.budget : level;
}

// Whether some sample can cost more than any batch of two or more (lump_census.h).
bool WindowPlanner::has_unmatched_lumps() const {
  return unmatched_lump_level(options_) >= 0;
}

// Whether a sample costing `cost` is an unmatched lump: dearer than any batch of two or
// more samples can be.
bool WindowPlanner::is_unmatched_lump(double cost) const {
  return has_unmatched_lumps() && cost > lump_level();
}

// The awkward band's pairs cost less than this share of the budget (FinishWay).
static constexpr double kAwkwardPairShare = 0.95;

// A lump: a sample longer than half the token bound, so alone in its batch, when a
// batch of two or more samples cannot reach the budget (a superlinear cost model).
// With `singletons`, also any sample too dear to share a batch with any other; with
// `awkward`, also any that makes batches of at most two that stay under
// kAwkwardPairShare of the budget.
bool WindowPlanner::is_lump(const Entry& e, bool singletons, bool awkward) const {
  const uint64_t most = per_batch(e.length);
  if (singletons && most == 1) return true;
  if (awkward && most == 2 &&
      2 * options_.cost.per_sample(e.length) < kAwkwardPairShare * limits_.budget)
    return true;
  return has_unmatched_lumps() && e.length > limits_.token_bound / 2;
}

size_t WindowPlanner::lump_count(const std::vector<Entry>& entries, bool singletons,
                                 bool awkward) const {
  return static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [&](const Entry& e) {
    return is_lump(e, singletons, awkward);
  }));
}

// Moves into `leftover` the planned steps whose dearest batch costs at least half the
// lump level: their batches are the partners that can come near a lump's cost.
void WindowPlanner::take_back_partners(std::vector<Planned>& planned,
                                       std::vector<Entry>& leftover) const {
  const double useful = 0.5 * lump_level();
  std::erase_if(planned, [&](const Planned& step) {
    if (dearest(step) < useful) return false;
    for (const Batch& b : step.batches)
      leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
    return true;
  });
}

// Each whole group of unmatched lumps (W of them, one a batch) takes, in place of its
// cheapest lumps dearer than each, the sparser unmatched lumps of the incomplete groups
// after it that no fillers can complete (above `filler_reach`, the dearest batch of
// fillers), the cheapest first, while its max/mean stays within spread_.most_ratio; the
// lumps it gives up join those groups, to be carried. The cheapest lumps of the epoch
// (at most spread_.reserve_cost) are left for its end. Nothing unless plan_lump_spread
// chose to spread (lump_census.h says why).
void WindowPlanner::spread_sparse_lumps(std::vector<CoarseGroup>& groups,
                                        double filler_reach) const {
  if (spread_.most_ratio == 0) return;
  const size_t W = world_size_;
  auto unmatched = [this](const Batch& b) {
    return b.entries.size() == 1 && is_unmatched_lump(b.cost);
  };
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<Batch>& whole = groups[g].batches;
    if (whole.size() != W || !std::all_of(whole.begin(), whole.end(), unmatched)) continue;
    std::vector<Batch*> sparse;  // cheapest first
    for (size_t h = groups.size(); h-- > g + 1;) {
      std::vector<Batch>& group = groups[h].batches;
      if (group.size() == W || groups[h].level * (1 - options_.level_tolerance) <= filler_reach)
        continue;
      for (size_t k = group.size(); k-- > 0;)
        if (unmatched(group[k]) && group[k].cost > spread_.reserve_cost)
          sparse.push_back(&group[k]);
    }
    double sum = 0, dearest = 0;
    for (const Batch& b : whole) {
      sum += b.cost;
      dearest = std::max(dearest, b.cost);
    }
    for (Batch* lump : sparse) {
      auto given_up = whole.end();  // the cheapest of the group dearer than `lump`
      for (auto it = whole.begin(); it != whole.end(); ++it)
        if (it->cost > lump->cost && (given_up == whole.end() || it->cost < given_up->cost))
          given_up = it;
      if (given_up == whole.end()) continue;
      const double swapped = sum - given_up->cost + lump->cost;
      if (dearest * static_cast<double>(W) > spread_.most_ratio * swapped) continue;
      sum = swapped;
      std::swap(*given_up, *lump);
    }
  }
}

// The leftover's unmatched lumps that fill whole steps, the dearest, dealt evenly over
// those steps (deal_lumps_evenly); the cheapest ones left over stay in `leftover` with
// the rest, for place_lumps. Nothing when they are fewer than W.
std::vector<WindowPlanner::Planned> WindowPlanner::deal_lump_steps(
    std::vector<Entry>& leftover) const {
  const size_t W = world_size_;
  std::vector<Batch> lumps;
  std::vector<Entry> rest;
  for (const Entry& e : leftover) {
    const double cost = options_.cost.per_sample(e.length);
    if (is_unmatched_lump(cost))
      lumps.push_back({{e}, e.length, cost});
    else
      rest.push_back(e);
  }
  if (lumps.size() < W) return {};
  std::stable_sort(lumps.begin(), lumps.end(), [](const Batch& a, const Batch& b) {
    return a.cost != b.cost ? a.cost > b.cost : by_key(a.entries.front(), b.entries.front());
  });
  const size_t whole = lumps.size() / W * W;
  for (size_t k = whole; k < lumps.size(); ++k) rest.push_back(lumps[k].entries.front());
  lumps.resize(whole);
  std::vector<double> costs;
  for (const Batch& b : lumps) costs.push_back(b.cost);
  std::vector<Planned> steps;
  for (const std::vector<size_t>& members : deal_lumps_evenly(costs, W)) {
    std::vector<Batch> batches;
    for (size_t k : members) batches.push_back(std::move(lumps[k]));
    steps.push_back(make_step(std::move(batches)));
  }
  leftover = std::move(rest);
  return steps;
}

// The leftover's lumps, placed by plan_lump_runs: each step a run of the dearest lumps
// left, its other ranks given the dearest batches of the rest of the leftover
// (place_runs). What the steps do not take stays in `leftover`.
std::vector<WindowPlanner::Planned> WindowPlanner::place_lumps(std::vector<Entry>& leftover,
                                                               const FinishWay& way) const {
  std::vector<Entry> lumps, rest;
  for (const Entry& e : leftover)
    (is_lump(e, way.singletons_as_lumps, way.awkward_as_lumps) ? lumps : rest).push_back(e);
  if (lumps.empty() || lumps.size() > kMostLumpsPlaced) return {};
  std::sort(lumps.begin(), lumps.end(), [](const Entry& a, const Entry& b) {
    return a.length != b.length ? a.length > b.length : by_key(a, b);
  });
  sort_by_key(rest);
  std::vector<double> lump_costs;
  for (const Entry& e : lumps) lump_costs.push_back(options_.cost.per_sample(e.length));
  std::optional<LumpPlacement> placement = way.partners_to_measure
                                               ? place_fluid_runs(rest, lump_costs, way.piece_cut)
                                               : place_runs(rest, lump_costs);
  if (!placement) return {};
  const LumpRuns& runs = placement->runs;
  std::vector<Batch>& partners = placement->partners;
  // The runs' batches in one list (lumps, then the partners used), each step a list
  // of indices into it, levelled further by swaps between steps.
  std::vector<Batch> units;
  for (size_t k = 0; k < lumps.size(); ++k)
    units.push_back({{lumps[k]}, lumps[k].length, lump_costs[k]});
  std::vector<std::vector<size_t>> members;
  size_t lump = 0, partner = 0;
  for (size_t run : runs.lumps_per_step) {
    std::vector<size_t> step;
    for (size_t k = 0; k < run; ++k) step.push_back(lump++);
    while (step.size() < world_size_) {
      step.push_back(units.size());
      units.push_back(std::move(partners[partner++]));
    }
    members.push_back(std::move(step));
  }
  std::vector<double> unit_costs;
  for (const Batch& b : units) unit_costs.push_back(b.cost);
  swap_to_level(unit_costs, members, members.size() * world_size_);
  std::vector<Planned> steps;
  for (const std::vector<size_t>& step : members) {
    std::vector<Batch> batches;
    for (size_t k : step) batches.push_back(std::move(units[k]));
    steps.push_back(make_step(std::move(batches)));
  }
  leftover.clear();
  for (; partner < partners.size(); ++partner) {
    const Batch& b = partners[partner];
    leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
  }
  return steps;
}

// Runs for the lumps (costs dearest first) and the partners completing them, cut from
// `rest` (in key order): at the budget, the fewest and dearest partners; when those are
// too few to complete the steps, or leave them far from level, also cut into exactly as
// many as one to four more steps need, each as cheap as the cut allows (a lump's step
// then takes many partners below the budget instead of few at it). The most level
// placement is kept (plan_lump_runs' worst step). Nothing when none completes the steps.
std::optional<WindowPlanner::LumpPlacement> WindowPlanner::place_runs(
    const std::vector<Entry>& rest, const std::vector<double>& lump_costs) const {
  std::optional<LumpPlacement> best;
  auto consider = [&](std::vector<Batch> partners) {
    std::stable_sort(partners.begin(), partners.end(),
                     [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
    std::vector<double> partner_costs;
    for (const Batch& b : partners) partner_costs.push_back(b.cost);
    std::optional<LumpRuns> runs = plan_lump_runs(lump_costs, partner_costs, world_size_);
    if (runs && (!best || runs->worst < best->runs.worst))
      best = LumpPlacement{std::move(*runs), std::move(partners)};
  };
  consider(segment_at(rest, limits_.budget));
  if (best && best->runs.worst <= kLevelEnough) return best;
  const size_t W = world_size_, fewest_steps = (lump_costs.size() + W - 1) / W;
  const size_t at_budget = best ? best->partners.size() : 0;
  for (size_t steps = fewest_steps; steps < fewest_steps + kMorePartnerSteps; ++steps) {
    const size_t wanted = steps * W - lump_costs.size();
    if (wanted > at_budget && wanted <= rest.size()) consider(cut_into(rest, wanted));
  }
  return best;
}

// Runs for the lumps with partners cut to measure from `rest` (plan_fluid_runs). With
// no `cut` the dearest steps take the longest of the rest, each piece as many samples
// as fit under its step's piece cost (at least one); otherwise each piece is cut by
// cut_fluid_pieces as `cut` says, no dearer than its step's dearest lump. The partners
// are listed in step order, then what is left of the rest cut at the budget (returned
// to the leftover by the caller); runs.worst is that of the pieces as cut.
std::optional<WindowPlanner::LumpPlacement> WindowPlanner::place_fluid_runs(
    const std::vector<Entry>& rest, const std::vector<double>& lump_costs,
    const std::optional<PieceCut>& cut) const {
  double fluid = 0;
  for (const Entry& e : rest) fluid += options_.cost.per_sample(e.length);
  const std::optional<FluidRuns> runs = plan_fluid_runs(lump_costs, fluid, world_size_);
  if (!runs) return std::nullopt;
  std::vector<std::vector<size_t>> pieces;
  if (!cut) {
    pieces = fluid_pieces_in_order(rest, *runs);
  } else {
    std::vector<PieceRequest> requests;
    for (size_t s = 0, lump = 0; s < runs->lumps_per_step.size(); ++s) {
      const size_t run = runs->lumps_per_step[s];
      const double cost = runs->piece_cost[s];
      for (size_t piece = run; piece < world_size_; ++piece)
        requests.push_back({cost, std::max(cost, lump_costs[lump])});
      lump += run;
    }
    // Each sample stands for the longest of it and those after it in key order (`rest`
    // is in key order): never shorter than what a piece from it holds, so no piece costs
    // more than cut_fluid_pieces counts, and the pieces keep the noisy sort's order.
    // By exact length, they were runs of the same samples every epoch that no deal
    // could mix, their lengths not overlapping (Python and C sources, quadratic, 64
    // ranks, 16,384 tokens, seed 1: 55-75% of the pairs of the lumps' steps batched
    // together again, 14.1% of the epoch's).
    std::vector<uint64_t> lengths(rest.size());
    uint64_t longest_after = 0;
    for (size_t k = rest.size(); k-- > 0;) {
      longest_after = std::max(longest_after, rest[k].length);
      lengths[k] = longest_after;
    }
    pieces = cut_fluid_pieces(lengths, requests, *cut, options_.cost,
                              [this](uint64_t length) { return per_batch(length); });
  }
  LumpPlacement placement{{runs->lumps_per_step, 1.0}, {}};
  std::vector<bool> taken(rest.size(), false);
  size_t piece = 0, lump = 0;
  for (const size_t run : runs->lumps_per_step) {
    double mass = 0, dearest = lump_costs[lump];  // lumps are dearest first
    for (size_t k = lump; k < lump + run; ++k) mass += lump_costs[k];
    lump += run;
    for (size_t rank = run; rank < world_size_; ++rank, ++piece) {
      Batch b;
      for (size_t k : pieces[piece]) {
        b.entries.push_back(rest[k]);
        taken[k] = true;
      }
      recost(b);
      mass += b.cost;
      dearest = std::max(dearest, b.cost);
      placement.partners.push_back(std::move(b));
    }
    const double ratio = step_imbalance(dearest, mass, world_size_);
    placement.runs.worst = std::max(placement.runs.worst, ratio);
  }
  std::vector<Entry> left;
  for (size_t k = 0; k < rest.size(); ++k)
    if (!taken[k]) left.push_back(rest[k]);
  for (Batch& b : segment_at(left, limits_.budget)) placement.partners.push_back(std::move(b));
  return placement;
}

// The pieces of `runs`, step by step, cut from `rest` (in key order) in that order: each
// as many samples as fit under its step's piece cost, at least one (none when `rest` is
// spent). Positions into `rest`.
std::vector<std::vector<size_t>> WindowPlanner::fluid_pieces_in_order(
    const std::vector<Entry>& rest, const FluidRuns& runs) const {
  std::vector<std::vector<size_t>> pieces;
  size_t next = 0;
  for (size_t s = 0; s < runs.lumps_per_step.size(); ++s) {
    for (size_t rank = runs.lumps_per_step[s]; rank < world_size_; ++rank) {
      const size_t first = next;
      if (next < rest.size()) take_segment(rest, next, runs.piece_cost[s]);
      std::vector<size_t>& piece = pieces.emplace_back();
      for (size_t k = first; k < next; ++k) piece.push_back(k);
    }
  }
  return pieces;
}

}  // namespace evenfeed
