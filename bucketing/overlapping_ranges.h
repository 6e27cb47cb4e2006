// Ranges of cost, found by whether they overlap a given one.
//
// split_in_cost_order splits pairs of steps whose cost ranges (cheapest batch to
// dearest) overlap. Trying every pair is quadratic in the steps of a window, and a
// window of steps of one or two samples a batch holds a hundred thousand steps or more.
// Every range here starts at one of a fixed set of values (the window's batch costs,
// each the cheapest of at most one step at a time), so the ranges are kept by the
// position of their low end in those values' sorted order, in a tree that holds the
// highest high end under each node: the ranges that start below a value and end above
// another are found in a walk that only enters nodes holding one.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace evenfeed {

class OverlappingRanges {
 public:
  // `values`: the values a range may start at, each named by its index.
  explicit OverlappingRanges(std::span<const double> values);

  // The range [values[low], high] belongs to `owner` (replacing any range that starts
  // at value `low`).
  void set(size_t low, double high, size_t owner);
  // No range starts at value `low` any more.
  void clear(size_t low);

  // Appends to `owners` the owner of every range [lo, hi] with lo < `below` and
  // hi > `above`, in no particular order.
  void find(double above, double below, std::vector<size_t>& owners) const;

 private:
  void update(size_t position, double high);
  void collect(size_t node, size_t first, size_t width, size_t end, double above,
               std::vector<size_t>& owners) const;

  std::vector<double> sorted_;    // the values in ascending order
  std::vector<size_t> position_;  // each value's place in `sorted_`
  std::vector<size_t> owner_at_;  // the owner of the range starting at each place
  size_t leaves_ = 1;             // a power of two, at least the values' count
  std::vector<double> highest_;   // the tree: node k's children are 2k and 2k + 1
};

}  // namespace evenfeed
