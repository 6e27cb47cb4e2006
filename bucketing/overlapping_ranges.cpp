#include "bucketing/overlapping_ranges.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace evenfeed {

static constexpr double kNone = -std::numeric_limits<double>::infinity();

OverlappingRanges::OverlappingRanges(std::span<const double> values)
    : position_(values.size()), owner_at_(values.size()) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return values[x] < values[y]; });
  sorted_.reserve(values.size());
  for (size_t place = 0; place < order.size(); ++place) {
    position_[order[place]] = place;
    sorted_.push_back(values[order[place]]);
  }
  while (leaves_ < values.size()) leaves_ *= 2;
  highest_.assign(2 * leaves_, kNone);
}

void OverlappingRanges::set(size_t low, double high, size_t owner) {
  owner_at_[position_[low]] = owner;
  update(position_[low], high);
}

void OverlappingRanges::clear(size_t low) {
  update(position_[low], kNone);
}

void OverlappingRanges::update(size_t position, double high) {
  size_t node = leaves_ + position;
  highest_[node] = high;
  for (node /= 2; node >= 1; node /= 2)
    highest_[node] = std::max(highest_[2 * node], highest_[2 * node + 1]);
}

void OverlappingRanges::find(double above, double below, std::vector<size_t>& owners) const {
  // The ranges that start below `below` are the places before `end`.
  const size_t end = static_cast<size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), below) -
                                         sorted_.begin());
  if (end > 0) collect(1, 0, leaves_, end, above, owners);
}

// Node `node` covers the places [first, first + width).
void OverlappingRanges::collect(size_t node, size_t first, size_t width, size_t end, double above,
                                std::vector<size_t>& owners) const {
  if (first >= end || !(highest_[node] > above)) return;
  if (width == 1) {
    owners.push_back(owner_at_[first]);
    return;
  }
  const size_t half = width / 2;
  collect(2 * node, first, half, end, above, owners);
  collect(2 * node + 1, first + half, half, end, above, owners);
}

}  // namespace evenfeed
