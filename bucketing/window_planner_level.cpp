// WindowPlanner, levelling a window's planned steps (step 5 in window_planner.h):
// whole batches exchanged between steps (level_by_swaps, shed_and_swap), single samples
// moved to batches with idle room (move_to_level), negligible steps dealt into others
// (absorb_negligible), and the padding room those may spend (padding_room).
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "bucketing/absorb_steps.h"
#include "bucketing/level_by_moves.h"
#include "bucketing/shed_to_level.h"
#include "bucketing/split_in_cost_order.h"
#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

// Exchanging whole batches between steps (level_by_swaps) goes on until every step is
// within this: it changes neither padding nor batch mates, so it may aim nearer 1 than
// the ways that spend padding (moves, borrowing, the final cut's tries). With every
// threshold at 1.02, padding rose to 1.79% on several real-corpus configurations; with
// this one alone, no padding or pairs changed and the worst step fell by up to 0.017.
static constexpr double kSwapUntil = 1.02;
// A step whose dearest batch costs at most this share of the budget is negligible, and
// dealt into another step of its window where that keeps it level (absorb_negligible).
static constexpr double kNegligibleShare = 0.01;
// Rounds of shedding (shed_to_level) and swapping again in shed_and_swap.
static constexpr int kShedRounds = 4;

// Padded slots that borrowing (borrow_for_lightest), moves (move_to_level) or absorbed
// steps (absorb_negligible) may add before the padding share of `step_lists` (a
// window's steps) reaches `share`.
double WindowPlanner::padding_room(std::initializer_list<const std::vector<Planned>*> step_lists,
                                   double share) const {
  Fill fill;
  for (const std::vector<Planned>* steps : step_lists) add_fill(*steps, fill);
  // x more padded slots keep the share: (slots + x - tokens) / (slots + x) <= share,
  // that is x <= (tokens - (1 - share) slots) / (1 - share).
  const double keep = 1 - share;
  return std::max(0.0, (fill.tokens - keep * fill.slots) / keep);
}

// Adds the slots and tokens of `steps` to `fill`.
void WindowPlanner::add_fill(const std::vector<Planned>& steps, Fill& fill) {
  for (const Planned& step : steps) {
    fill.slots += slots(step.batches);
    for (const Batch& b : step.batches)
      for (const Entry& e : b.entries) fill.tokens += static_cast<double>(e.length);
  }
}

// Padded slots over all slots of `planned`'s batches (0 when empty).
double WindowPlanner::padding_share(const std::vector<Planned>& planned) {
  Fill fill;
  add_fill(planned, fill);
  return fill.slots > 0 ? 1.0 - fill.tokens / fill.slots : 0.0;
}

// A step left far from level, most often a final step with a few light batches or
// lumps of mixed cost, can be levelled by exchanging whole batches with the window's
// other steps: a light batch costs a level step little (its mean falls by the
// batch's deficit / W), and the batch it gives back is at that step's level. Batches
// stay whole, so padding and every sample's batch mates are unchanged; only the step a
// batch runs in moves. Does nothing when every step is within kSwapUntil.
void WindowPlanner::level_by_swaps(std::vector<Planned>& steps) const {
  const size_t W = world_size_;
  exchange_batches(steps, [W](std::span<const double> costs, BatchIndexSteps& members) {
    swap_to_level(costs, members, 4 * W);
  });
}

// Once a window's steps are chosen (plan(), after the quieter plan): a step whose few
// dearest batches set its max/mean sheds them to steps that are longer anyway
// (shed_to_level), which shortens it and lengthens none, and the swaps are tried again
// after each round. Only then, so that no choice between plans sees it: made where
// level_by_swaps is, it left an end level enough (kLevelEnough) for the better ends
// that are tried only when it is not to be skipped (1.8 million sentences at 64 ranks,
// 16,384 tokens, quadratic: one more step an epoch, useful share -1.2 points). Last,
// pairs of steps whose costs overlap are split again in cost order where that levels
// them (split_in_cost_order), never lengthening them, and the swaps tried once more.
void WindowPlanner::shed_and_swap(std::vector<Planned>& steps) const {
  const size_t W = world_size_;
  exchange_batches(steps, [W](std::span<const double> costs, BatchIndexSteps& members) {
    const ShedOptions shed{.level_enough = kSwapUntil};
    for (int round = 0; round < kShedRounds && shed_to_level(costs, members, shed) > 0; ++round)
      swap_to_level(costs, members, 4 * W);
    if (split_in_cost_order(costs, members) > 0) swap_to_level(costs, members, 4 * W);
  });
}

// The window's batches as units, each step a list of indices into them, for
// `exchange` to move between steps; the steps rebuilt from what it leaves. Does
// nothing when every step is within kSwapUntil.
void WindowPlanner::exchange_batches(
    std::vector<Planned>& steps,
    const std::function<void(std::span<const double>, BatchIndexSteps&)>& exchange) const {
  const bool level = std::all_of(steps.begin(), steps.end(),
                                 [&](const Planned& s) { return imbalance(s) <= kSwapUntil; });
  if (level) return;
  std::vector<Batch> units;
  BatchIndexSteps members;
  size_t batch_count = 0;
  for (const Planned& step : steps) batch_count += step.batches.size();
  units.reserve(batch_count);
  members.reserve(steps.size());
  for (Planned& step : steps) {
    std::vector<size_t> indices;
    for (Batch& b : step.batches) {
      indices.push_back(units.size());
      units.push_back(std::move(b));
    }
    members.push_back(std::move(indices));
  }
  std::vector<double> costs;
  costs.reserve(units.size());
  for (const Batch& b : units) costs.push_back(b.cost);
  exchange(costs, members);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::vector<Batch> batches;
    for (size_t k : members[s]) batches.push_back(std::move(units[k]));
    steps[s] = make_step(std::move(batches));
  }
}

// A step still far from level after the swaps, because its dearest batches are fine
// samples cut too dear, gives single samples to batches of other steps with idle room
// (level_by_moves), within the window's padding room (kBorrowPaddingShare).
void WindowPlanner::move_to_level(std::vector<Planned>& steps) const {
  const bool level = std::all_of(steps.begin(), steps.end(),
                                 [&](const Planned& s) { return imbalance(s) <= kLevelEnough; });
  if (level) return;
  const MoveOptions options{.level_enough = kLevelEnough,
                            .padding_room = padding_room({&steps}, kBorrowPaddingShare)};
  SampleTable table = tabulate(steps);
  level_by_moves(
      table.lengths, table.members, options_.cost,
      [this](uint64_t count, uint64_t longest) { return fits(count, longest); }, options);
  steps = untabulate(table);
}

// A window's negligible steps (a few very short samples a rank) dealt into its other
// steps where that keeps them level (absorb_steps.h), while the window pads no more
// than its padding guard (1.9%; a window above it would have been planned again
// quieter). Not the 1.8% the moves keep to: at seed 1, Python and C sources at 64 ranks
// (quadratic, 16,384 tokens) pad 1.75%, and the 448 tiny files of its two negligible
// steps need about 0.07% more.
void WindowPlanner::absorb_negligible(std::vector<Planned>& steps) const {
  const double share = std::max(kBorrowPaddingShare, options_.padding_guard);
  const AbsorbOptions options{.budget = limits_.budget,
                              .negligible_share = kNegligibleShare,
                              .level_enough = kSwapUntil,
                              .padding_room = padding_room({&steps}, share)};
  const bool any = std::any_of(steps.begin(), steps.end(), [&](const Planned& s) {
    return s.samples > 0 && dearest(s) <= options.negligible_share * options.budget;
  });
  if (!any || steps.size() < 2) return;
  SampleTable table = tabulate(steps);
  absorb_negligible_steps(
      table.lengths, table.members, options_.cost,
      [this](uint64_t count, uint64_t longest) { return fits(count, longest); }, options);
  steps = untabulate(table);
}

// The window's samples in one list (their batches emptied as they are listed, so a
// large window is not held twice), each batch a list of positions into it.
WindowPlanner::SampleTable WindowPlanner::tabulate(std::vector<Planned>& steps) {
  SampleTable table;
  size_t samples = 0;
  for (const Planned& step : steps) samples += step.samples;
  table.entries.reserve(samples);
  table.lengths.reserve(samples);
  table.members.resize(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    for (Batch& b : steps[s].batches) {
      std::vector<size_t>& batch = table.members[s].emplace_back();
      for (const Entry& e : b.entries) {
        batch.push_back(table.entries.size());
        table.entries.push_back(e);
        table.lengths.push_back(e.length);
      }
      std::vector<Entry>().swap(b.entries);
    }
  }
  return table;
}

// The steps `table` lists, their batches costed again.
std::vector<WindowPlanner::Planned> WindowPlanner::untabulate(const SampleTable& table) const {
  std::vector<Planned> steps;
  steps.reserve(table.members.size());
  for (const std::vector<std::vector<size_t>>& members : table.members) {
    std::vector<Batch> batches;
    for (const std::vector<size_t>& batch : members) {
      Batch& b = batches.emplace_back();
      for (size_t k : batch) b.entries.push_back(table.entries[k]);
      recost(b);
    }
    steps.push_back(make_step(std::move(batches)));
  }
  return steps;
}

}  // namespace evenfeed
