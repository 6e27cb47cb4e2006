// Greedy segments of samples in a fixed order, counted fast.
//
// The window's end is cut into W batches per step by bisecting on a cost level: at each
// level the samples (in key order) are cut greedily, each segment taking samples while
// the batch, padded to its longest, fits the limits and costs at most the level; the
// cheapest level that needs no more segments than there are slots wins
// (WindowPlanner::cut_into). That counts the segments of the same order up to 60 times
// per cut, and a light final step is cut twice for each of its W batches
// (split_off_light_tail): scanning every sample each time took a quarter of the
// planning time of a corpus of 1.8 million sentences.
//
// A segment's cost depends only on its sample count and its longest sample, and grows
// with both, so the samples a segment takes are a prefix: it can be found by jumping
// from one sample longer than all before it to the next (`next_longer`), taking as many
// samples between them as the count allows. In key order (noisy longest-first) such
// records are few, so a segment is found in a few steps, not one per sample.
// scan_segment_end is the plain scan it must agree with exactly (the tests check it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

// What one batch may hold.
struct BatchLimits {
  CostModel cost;
  double budget = 0;          // the most a batch may cost
  uint64_t cap = UINT64_MAX;  // the most samples (max_batch_size; UINT64_MAX: none)
  uint64_t token_bound = 0;   // the most padded tokens, count x longest (0: none)

  bool fits(uint64_t count, uint64_t longest) const {
    return count <= cap && cost.batch(count, longest) <= budget &&
           (token_bound == 0 || count * longest <= token_bound);
  }
  // Whether `count` samples padded to `longest` fit and cost at most `level`.
  bool fits_at(uint64_t count, uint64_t longest, double level) const {
    return fits_at(count, longest, cost.per_sample(longest), level);
  }
  // The same, given `per_sample` = cost.per_sample(longest): a caller that asks for many
  // counts at one length works it out once (GreedySegments::most_at).
  bool fits_at(uint64_t count, uint64_t longest, double per_sample, double level) const {
    const double batch = static_cast<double>(count) * per_sample;  // cost.batch's product
    return count <= cap && batch <= budget && batch <= level &&
           (token_bound == 0 || count * longest <= token_bound);
  }
};

// Where the greedy segment starting at `begin` (< size) ends: it takes the samples after
// the first while the batch fits and costs at most `level` (the first alone when it
// costs more). `longest` is set to its longest sample. `length_at(k)` is sample k's
// length. One step per sample: the reference for GreedySegments, and the way to cut a
// single segment.
template <class LengthAt>
size_t scan_segment_end(size_t size, size_t begin, double level, const BatchLimits& limits,
                        LengthAt length_at, uint64_t& longest) {
  longest = length_at(begin);
  size_t end = begin + 1;
  for (; end < size; ++end) {
    const uint64_t with_next = std::max<uint64_t>(longest, length_at(end));
    if (!limits.fits_at(end - begin + 1, with_next, level)) break;
    longest = with_next;
  }
  return end;
}

// The same segments as scan_segment_end, over one fixed order of lengths, for many
// levels: built once (one pass), then each segment costs a few steps.
class GreedySegments {
 public:
  GreedySegments(std::vector<uint64_t> lengths, const BatchLimits& limits);

  // A run of the order, [from, to), cut as if it were the whole order: a segment never
  // runs past `to`. A later, longer sample inside the run is the whole order's next
  // longer one, so one GreedySegments answers for every run of it (a window's end is
  // cut again in two parts at many places: WindowPlanner::split_off_light_tail).
  struct Run {
    size_t from = 0, to = 0;
  };
  Run all() const { return {0, lengths_.size()}; }

  // As scan_segment_end, over the whole order or over `run` (from <= begin < to).
  size_t end(size_t begin, double level, uint64_t& longest) const;
  size_t end(size_t begin, Run run, double level, uint64_t& longest) const;
  // How many segments the greedy cut at `level` makes, counting no further than
  // `most` + 1.
  size_t count(double level, size_t most = SIZE_MAX) const;

  // count(), and the levels around `level` at which it stays the same.
  struct Count {
    size_t segments = 0;
    // The cost of the dearest segment (where `segments` <= `most`): at every level from
    // it up to `level` the cut is the same, and from it up it makes at most `segments`.
    double dearest = 0;
    // The least level at which one of the segments counted would take one more sample
    // (infinity: none would at any level): below it, from `level` on, the cut makes
    // the same segments, so at least `segments` of them (more than `most` where it
    // stopped counting there).
    double lengthens_at = 0;
  };
  Count count_at(double level, size_t most = SIZE_MAX) const;
  Count count_at(Run run, double level, size_t most = SIZE_MAX) const;

  // Bisection for the least level at which `run` makes at most `most` segments: [lo, hi]
  // halved `halvings` times, or until hi - lo <= tolerance x hi; returns hi. Each
  // count_at tells how far above and below its level the answer stays the same, so the
  // midpoints inside those ranges are decided without counting: the same midpoints and
  // the same answers as counting each one.
  double least_level(Run run, size_t most, double lo, double hi, int halvings,
                     double tolerance = 0) const;

 private:
  // The most samples of which `longest` is the longest that fit at `level` (0 if not
  // even one), at most the number of samples.
  size_t most_at(uint64_t longest, double level) const;

  std::vector<uint64_t> lengths_;
  std::vector<size_t> next_longer_;  // the first later sample that is longer, or size
  BatchLimits limits_;
};

}  // namespace evenfeed
