// WindowPlanner, idle ranks: a finished window's step that leaves ranks without a batch
// borrows whole batches from another step, which cuts what it keeps W ways again
// (fill_idle_ranks, step 5 in window_planner.h).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

// Donors tried per step with idle ranks: those whose batches would fill the idle ranks
// most dearly first. Steps with idle ranks are rare (a window's end), donors many.
static constexpr size_t kDonorsTried = 16;

// How many of `step`'s ranks have no batch.
size_t WindowPlanner::idle_ranks(const Planned& step) {
  return static_cast<size_t>(std::count_if(step.batches.begin(), step.batches.end(),
                                           [](const Batch& b) { return b.entries.empty(); }));
}

// The cost of `donor`'s `k`-th dearest batch (k from 0).
double WindowPlanner::kth_dearest(const Planned& donor, size_t k) {
  std::vector<double> costs;
  for (const Batch& b : donor.batches) costs.push_back(b.cost);
  std::nth_element(costs.begin(), costs.begin() + static_cast<long>(k), costs.end(),
                   std::greater<>());
  return costs[k];
}

// `step`'s idle ranks take `donor`'s dearest batches, one each; the donor's other
// samples are cut W ways in key order. None when they do not make exactly W batches
// (too few samples, or, in key order rather than length order, more than W at the
// budget).
std::optional<std::pair<WindowPlanner::Planned, WindowPlanner::Planned>>
WindowPlanner::lend_batches(const Planned& step, const Planned& donor) const {
  const size_t idle = idle_ranks(step);
  std::vector<Batch> lent = donor.batches;
  std::sort(lent.begin(), lent.end(),
            [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  std::vector<Entry> kept;
  for (size_t k = idle; k < lent.size(); ++k)
    kept.insert(kept.end(), lent[k].entries.begin(), lent[k].entries.end());
  sort_by_key(kept);
  std::vector<Batch> recut = cut_into(kept, world_size_);
  if (recut.size() != world_size_) return std::nullopt;
  lent.resize(idle);
  for (const Batch& b : step.batches)
    if (!b.entries.empty()) lent.push_back(b);
  return std::make_pair(make_step(std::move(lent)), make_step(std::move(recut)));
}

// A step that leaves ranks idle waits at max/mean W / its batches or worse: a lump or
// two at an epoch's end whose only partners would be short samples held in capped
// steps, which a final cut does not take back (one 1,000-token document among 5,000
// of 5-15 tokens at 2 ranks, quadratic cost, the automatic cap of 64: a step of the
// document beside an idle rank, max/mean 2). Swapping batches cannot help (the donor
// would idle instead), but another step can lend its dearest batches to the idle
// ranks and cut the rest of its samples W ways, a lighter step of its own. The donor
// that leaves the worse of the two most level is taken, if that is more level than
// the idle step was and the padding it adds fits the window's room
// (kBorrowPaddingShare). Returns whether any step changed: the window's batches can
// then be exchanged again (level_by_swaps).
bool WindowPlanner::fill_idle_ranks(std::vector<Planned>& steps) const {
  bool changed = false;
  double room = -1;  // padded slots the window may still add; computed when needed
  for (size_t s = 0; s < steps.size(); ++s) {
    const size_t idle = idle_ranks(steps[s]);
    if (idle == 0 || idle == world_size_) continue;
    if (room < 0) room = padding_room({&steps}, kBorrowPaddingShare);
    std::vector<std::pair<double, size_t>> donors;  // the cost lent to the last idle rank
    for (size_t d = 0; d < steps.size(); ++d) {
      if (d != s && idle_ranks(steps[d]) == 0)
        donors.emplace_back(kth_dearest(steps[d], idle - 1), d);
    }
    const size_t tried = std::min(donors.size(), kDonorsTried);
    std::partial_sort(donors.begin(), donors.begin() + static_cast<long>(tried), donors.end(),
                      std::greater<>());
    double best_worst = imbalance(steps[s]), best_added = 0;
    std::optional<std::pair<Planned, Planned>> best;
    size_t best_donor = 0;
    for (size_t k = 0; k < tried; ++k) {
      const size_t d = donors[k].second;
      auto lent = lend_batches(steps[s], steps[d]);
      if (!lent) continue;
      const double added = slots(lent->first.batches) + slots(lent->second.batches) -
                           slots(steps[s].batches) - slots(steps[d].batches);
      const double worst = std::max(imbalance(lent->first), imbalance(lent->second));
      if (worst < best_worst && added <= room) {
        best_worst = worst;
        best_added = added;
        best = std::move(lent);
        best_donor = d;
      }
    }
    if (!best) continue;
    steps[s] = std::move(best->first);
    steps[best_donor] = std::move(best->second);
    room -= best_added;
    changed = true;
  }
  return changed;
}

}  // namespace evenfeed
