// Lending short samples to a final step's light batch.
//
// A window's final cut can end with one batch of a few short samples beside batches
// at the step's level (a few short files after mid-length ones, too far apart in
// length to share a batch): cutting cannot level it. The window's finest-grained
// planned steps hold many short samples, so such a step (a donor) lends some of them:
// from each of its batches in turn, the longest sample no longer than the light
// batch's longest (so nothing the light batch holds is padded more), until the light
// batch would cost more than the step's dearest batch.
//
// Two limits keep a donor from paying for it. Its max/mean stays within
// `donor_level` (or within its own, if less level already): a donor batch whose
// samples are all longer than the light batch's (a run of mid-length files beside
// steps of short ones) keeps its cost while the others give, and lending until the
// light batch was full once left a donor at max/mean 1.12. And a donor batch keeps one
// sample at its longest, so each sample it gives lowers its cost by one sample's
// share: taking the longest too (in a run of like lengths, alone at the top) would cut
// the batch's cost to its next sample's length.
//
// Each sample lent is padded to the light batch's longest: the padded slots it adds
// (that longest less the donor batch's longest, at most 0 when the donor pads it as
// much) are counted against `room`. Header-only because the planner's batch type is its
// own: any `Batch` with `entries` (each with a `length`), `longest` and `cost`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct LightLendOptions {
  // The light batch never costs more than this (its step's dearest batch).
  double dearest = 0;
  // Padded slots the samples lent may add in all.
  double room = 0;
  // A donor lends while its max/mean stays within this, or within its own if above.
  double donor_level = 1.02;
  // Ranks a step has: a donor's max/mean counts those without a batch.
  size_t world_size = 1;
};

struct LightFill {       // what lend_to_light did
  double spent = 0;      // padded slots added
  bool moved = false;    // whether a sample moved
  bool stopped = false;  // the light batch is full, or the room spent: try no other donor
};

// The sample `from` lends to a light batch whose longest is `ceiling`: its longest one
// no longer than that, but never the last at `from`'s own longest (end(): none).
template <class Batch>
auto sample_to_lend(Batch& from, uint64_t ceiling) {
  auto pick = from.entries.end();
  if (from.entries.size() < 2) return pick;
  bool longest_kept = false;
  for (auto it = from.entries.begin(); it != from.entries.end(); ++it) {
    if (it->length == from.longest && !longest_kept) {
      longest_kept = true;
      continue;
    }
    if (it->length <= ceiling && (pick == from.entries.end() || it->length > pick->length))
      pick = it;
  }
  return pick;
}

// Moves samples from `donor`'s batches into `light`, one from each batch in turn, while
// the limits above allow. `fits(count, longest)`: whether a batch of `count` samples
// padded to `longest` is allowed (sample cap, token bound). Batches' `cost` fields are
// kept current; their `longest` does not change.
template <class Batch, class Fits>
LightFill lend_to_light(std::vector<Batch>& donor, Batch& light, const CostModel& cost,
                        const Fits& fits, const LightLendOptions& options) {
  LightFill fill;
  double sum = 0, most = 0;
  for (const Batch& b : donor) {
    sum += b.cost;
    most = std::max(most, b.cost);
  }
  const double limit = std::max(options.donor_level, step_imbalance(most, sum, options.world_size));
  for (bool moved = true; moved;) {
    moved = false;
    for (Batch& from : donor) {
      auto pick = sample_to_lend(from, light.longest);
      if (pick == from.entries.end()) continue;
      const double light_cost = cost.batch(light.entries.size() + 1, light.longest);
      const double padding = static_cast<double>(light.longest) - static_cast<double>(from.longest);
      if (light_cost > options.dearest || !fits(light.entries.size() + 1, light.longest) ||
          fill.spent + padding > options.room) {
        fill.stopped = true;
        return fill;
      }
      const double from_cost = cost.batch(from.entries.size() - 1, from.longest);
      double new_most = most;
      if (from.cost >= most) {
        new_most = from_cost;
        for (const Batch& b : donor)
          if (&b != &from) new_most = std::max(new_most, b.cost);
      }
      const double new_sum = sum - from.cost + from_cost;
      if (step_imbalance(new_most, new_sum, options.world_size) > limit) return fill;
      fill.spent += padding;
      light.entries.push_back(*pick);
      light.cost = light_cost;
      from.entries.erase(pick);
      from.cost = from_cost;
      sum = new_sum;
      most = new_most;
      fill.moved = moved = true;
    }
  }
  return fill;
}

}  // namespace evenfeed
