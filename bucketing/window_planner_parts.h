// WindowPlanner's private parts, shared by its two source files: window_planner.cpp
// (sorting, packing and a window's steps) and window_planner_final.cpp (the final cut
// of what cannot be carried, and the placement of lumps). Not for other users.
#pragma once

#include <cstdint>
#include <vector>

#include "bucketing/window_planner.h"

namespace evenfeed {

// Samples per batch at or above which a sample is a filler: fine enough grain to cut
// a batch to any cost level within a few percent.
inline constexpr uint64_t kFillerPerBatch = 16;

struct WindowPlanner::Entry {
  uint64_t id;
  uint64_t length;
  double key;
  uint64_t tie;
};

struct WindowPlanner::Batch {
  std::vector<Entry> entries;
  uint64_t longest = 0;
  double cost = 0;
};

struct WindowPlanner::Planned {
  std::vector<Batch> batches;
  double mean_length = 0;
  uint64_t samples = 0;
};

// What one window's planning has made so far.
struct WindowPlanner::Work {
  std::vector<Planned> planned;  // whole steps, some of which a final cut may take back
  std::vector<Planned> apart;    // steps of capped samples or lumps, never taken back
  std::vector<Entry> leftover;   // samples in no step yet
  std::vector<Entry> capped;     // fillers a cap or bound keeps below the budget

  void give_back(const std::vector<Batch>& batches) {
    for (const Batch& b : batches)
      leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
  }
};

}  // namespace evenfeed
