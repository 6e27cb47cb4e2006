#include "bucketing/greedy_segments.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace evenfeed {

GreedySegments::GreedySegments(std::vector<uint64_t> lengths, const BatchLimits& limits)
    : lengths_(std::move(lengths)), next_longer_(lengths_.size()), limits_(limits) {
  // From the back, a stack of the samples longer than every one after them so far.
  std::vector<size_t> longer;
  for (size_t k = lengths_.size(); k-- > 0;) {
    while (!longer.empty() && lengths_[longer.back()] <= lengths_[k]) longer.pop_back();
    next_longer_[k] = longer.empty() ? lengths_.size() : longer.back();
    longer.push_back(k);
  }
}

size_t GreedySegments::most_at(uint64_t longest, double level) const {
  const size_t size = lengths_.size();
  // The sample's cost worked out once: most of a plan's time at 64 ranks is spent here.
  const double per_sample = limits_.cost.per_sample(longest);
  const auto fits = [&](uint64_t count) {
    return limits_.fits_at(count, longest, per_sample, level);
  };
  // A first guess from the cost alone, then corrected with the exact test: the count
  // it gives must be the scan's to the last sample.
  const double guess = per_sample > 0 ? std::floor(std::min(level, limits_.budget) / per_sample)
                                      : static_cast<double>(size);
  double bounded = std::min({guess, static_cast<double>(size),
                             static_cast<double>(std::min<uint64_t>(limits_.cap, size))});
  if (limits_.token_bound > 0 && longest > 0)
    bounded = std::min(bounded, static_cast<double>(limits_.token_bound / longest));
  size_t most = bounded > 0 ? static_cast<size_t>(bounded) : 0;
  while (most > 0 && !fits(most)) --most;
  while (most < size && fits(most + 1)) ++most;
  return most;
}

size_t GreedySegments::end(size_t begin, double level, uint64_t& longest) const {
  return end(begin, all(), level, longest);
}

size_t GreedySegments::end(size_t begin, Run run, double level, uint64_t& longest) const {
  const size_t size = run.to;
  // [begin, end) is taken, `longest` is its longest sample, and the samples in
  // [end, stop) are no longer.
  size_t end = begin + 1;
  longest = lengths_[begin];
  size_t stop = std::min(next_longer_[begin], size);
  for (;;) {
    // Sample k holds count k - begin + 1 with `longest` still the longest: taken while
    // that count fits. (The first sample is taken even when it alone does not.)
    const size_t reach = begin + most_at(longest, level);
    if (reach < stop) return std::max(end, reach);
    end = stop;
    if (stop == size || !limits_.fits_at(stop - begin + 1, lengths_[stop], level)) return end;
    longest = lengths_[stop];
    end = stop + 1;
    stop = std::min(next_longer_[stop], size);
  }
}

size_t GreedySegments::count(double level, size_t most) const {
  return count_at(all(), level, most).segments;
}

GreedySegments::Count GreedySegments::count_at(double level, size_t most) const {
  return count_at(all(), level, most);
}

// A segment ends where its next sample would break the limits (at any level) or cost
// more than `level`; in the second case, at the level of that cost it would take it.
GreedySegments::Count GreedySegments::count_at(Run run, double level, size_t most) const {
  Count out;
  out.lengthens_at = std::numeric_limits<double>::infinity();
  uint64_t longest = 0;
  for (size_t next = run.from; next < run.to && out.segments <= most; ++out.segments) {
    const size_t begin = next;
    next = end(begin, run, level, longest);
    const uint64_t count = next - begin;
    out.dearest = std::max(out.dearest, limits_.cost.batch(count, longest));
    if (next == run.to) continue;
    const uint64_t with_next = std::max(longest, lengths_[next]);
    if (limits_.fits(count + 1, with_next))
      out.lengthens_at = std::min(out.lengthens_at, limits_.cost.batch(count + 1, with_next));
  }
  return out;
}

double GreedySegments::least_level(Run run, size_t most, double lo, double hi, int halvings,
                                   double tolerance) const {
  double fits_from = std::numeric_limits<double>::infinity(), too_many_below = lo;
  for (int k = 0; k < halvings && hi - lo > tolerance * hi; ++k) {
    const double mid = 0.5 * (lo + hi);
    bool fits = mid >= fits_from;
    if (!fits && mid >= too_many_below) {
      const Count c = count_at(run, mid, most);
      fits = c.segments <= most;
      if (fits)
        fits_from = std::min(fits_from, c.dearest);
      else
        too_many_below = std::max(too_many_below, c.lengthens_at);
    }
    (fits ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace evenfeed
