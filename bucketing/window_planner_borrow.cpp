// WindowPlanner, a final step's light batch: when the final cut leaves one batch of a
// few short samples far below the step's dearest, it borrows short samples from the
// window's finest-grained planned steps (borrow_for_lightest, step 4 in
// window_planner.h).
#include <algorithm>
#include <utility>
#include <vector>

#include "bucketing/lend_to_light.h"
#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"

namespace evenfeed {

// A final step's light batch borrows from at most this many planned steps, each
// lending while it stays within kDonorLevel max/mean (or its own, if less level): one
// donor lending until the light batch was full left the donor less level than the step
// had been (lend_to_light.h).
static constexpr size_t kMostDonors = 8;
static constexpr double kDonorLevel = 1.02;

// A final step's lightest batch, when its samples are too few and too far in length
// from the rest to be levelled by cutting (a few short samples after mid-length ones),
// borrows from the finest-grained planned steps, most samples first, at most
// kMostDonors of them, each lending as lend_to_light.h says, until the light batch
// reaches the step's dearest or the padded slots it adds would pass `room`, which it
// lowers by what it spent. Kept only if the step gets more level. Returns whether
// anything moved.
bool WindowPlanner::borrow_for_lightest(std::vector<Planned>& planned, Planned& step,
                                        double& room) const {
  const double before = imbalance(step);
  if (before <= kLevelEnough) return false;
  std::vector<size_t> donors;
  for (size_t d = 0; d < planned.size(); ++d)
    if (planned[d].samples >= 2 * world_size_) donors.push_back(d);
  std::stable_sort(donors.begin(), donors.end(),
                   [&](size_t a, size_t b) { return planned[a].samples > planned[b].samples; });
  if (donors.size() > kMostDonors) donors.resize(kMostDonors);
  auto light = std::min_element(step.batches.begin(), step.batches.end(),
                                [](const Batch& x, const Batch& y) { return x.cost < y.cost; });
  const Batch light_before = *light;
  const double step_dearest = dearest(step);
  std::vector<std::pair<size_t, Planned>> lenders;  // each donor that gave, as it was
  double spent = 0;
  for (size_t d : donors) {
    Planned before_giving = planned[d];
    const LightLendOptions lend{.dearest = step_dearest,
                                .room = room - spent,
                                .donor_level = kDonorLevel,
                                .world_size = world_size_};
    const LightFill fill = lend_to_light(
        planned[d].batches, *light, options_.cost,
        [this](uint64_t count, uint64_t longest) { return fits(count, longest); }, lend);
    if (fill.moved) {  // lend_to_light kept the batches' costs; the step's counts follow
      spent += fill.spent;
      count_samples(planned[d]);
      lenders.emplace_back(d, std::move(before_giving));
    }
    if (fill.stopped) break;
  }
  if (lenders.empty() || imbalance(step) >= before) {
    for (auto& [d, was] : lenders) planned[d] = std::move(was);
    *light = light_before;
    return false;
  }
  count_samples(step);
  room -= spent;
  return true;
}

}  // namespace evenfeed
