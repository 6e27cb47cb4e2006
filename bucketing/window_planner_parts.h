// WindowPlanner's private parts, shared by its source files: window_planner.cpp
// (sorting, packing and a window's steps), window_planner_final.cpp (the final cut of
// what cannot be carried) and the others named in window_planner.h. Not for other
// users.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "bucketing/fluid_pieces.h"
#include "bucketing/lump_runs.h"
#include "bucketing/recent_results.h"
#include "bucketing/window_planner.h"

namespace evenfeed {

// Samples per batch at or above which a sample is a filler: fine enough grain to cut
// a batch to any cost level within a few percent.
inline constexpr uint64_t kFillerPerBatch = 16;

// Borrowing for a light final batch pads what it borrows to that batch's longest
// sample; it may raise the window's padding share to this much, no further (the
// target is 2%: one light batch of long samples filled with one-word entries once
// padded a whole epoch of `changelog_entries` from 1.4% to 3.5%).
inline constexpr double kBorrowPaddingShare = 0.018;

// A final step whose dearest batch costs at most this times the mean is level enough.
inline constexpr double kLevelEnough = 1.04;
// The level tolerance a last window out of level is planned again with.
inline constexpr double kTighterLevelTolerance = 0.05;

// A window still above the padding target (kPaddingTarget) after its quieter plan
// (BucketingOptions::padding_guard) is planned once more with the noise's cap scaled
// by this.
inline constexpr double kQuieterNoiseCap = 0.75;

// At most this many lumps are placed by plan_lump_runs (quadratic in their number);
// more are dense enough to be cut W at a time.
inline constexpr size_t kMostLumpsPlaced = 1024;

// max/mean over `ranks` of the costs of `items` (batches, or spans of batches to be),
// the ranks without one counting as 0; 1 when they cost nothing.
template <typename Items>
double max_over_mean(const Items& items, size_t ranks) {
  double total = 0, dearest = 0;
  for (const auto& item : items) {
    total += item.cost;
    dearest = std::max(dearest, item.cost);
  }
  return total > 0 ? dearest * static_cast<double>(ranks) / total : 1.0;
}

struct WindowPlanner::Entry {
  uint64_t id;
  uint64_t length;
  double key;
  uint64_t tie;
  friend bool operator==(const Entry&, const Entry&) = default;
};

struct WindowPlanner::Batch {
  std::vector<Entry> entries;
  uint64_t longest = 0;
  double cost = 0;
};

// The batch batch_below would cut: fillers[begin, begin + count), its longest sample and
// its cost.
struct WindowPlanner::Span {
  size_t begin = 0, count = 0;
  uint64_t longest = 0;
  double cost = 0;
};

// Where plan_capped first cut a step at a level of its own choosing: the capped samples
// left then, and how many steps were apart; the plain capped steps go on from there.
struct WindowPlanner::CappedFork {
  std::vector<Entry> capped;
  size_t apart = 0;
};

struct WindowPlanner::Planned {
  std::vector<Batch> batches;
  double mean_length = 0;
  uint64_t samples = 0;
};

// A window's samples in one list, and each step's batches as positions into it, for
// the passes that move single samples between steps (level_by_moves, absorb_steps).
struct WindowPlanner::SampleTable {
  std::vector<Entry> entries;
  std::vector<uint64_t> lengths;
  std::vector<std::vector<std::vector<size_t>>> members;  // [step][rank] -> positions
};

// At most this many leftovers' final cuts are kept, holding at most kMostCutSamples
// samples between them (recent_results.h): enough for every way a window's end is
// finished, and its quieter and regrouped plans, on the sweeps' small corpora (at 32,
// 285 of 336 cuts in an epoch of 5,000 synthetic samples were found kept; 16 kept 225).
// The samples bound keeps the memory they take under about 8 MB (each kept sample is
// held twice, in the leftover and in its cut); a leftover larger than it is cut each
// time, as large corpora's few leftovers are.
inline constexpr size_t kMostFinalCutsKept = 32;
inline constexpr size_t kMostCutSamples = size_t{1} << 16;

struct WindowPlanner::FinalCuts : RecentResults<Entry, std::vector<Planned>> {
  FinalCuts() : RecentResults(kMostFinalCutsKept, kMostCutSamples) {}
};

// The runs plan_lump_runs chose for a leftover's lumps (dearest first), and the
// partner batches (dearest first) that complete their steps.
struct WindowPlanner::LumpPlacement {
  LumpRuns runs;
  std::vector<Batch> partners;
};

// How finish() makes a window's end. finish_level tries the ways that apply and keeps
// the most level result.
struct WindowPlanner::FinishWay {
  // Set aside, while planned steps are taken back, the short samples that a sample cap
  // or token bound keeps from reaching the leftover's dearest sample (bounded only).
  bool set_aside = false;
  // Place samples that no other sample can share a batch with (more than half the
  // budget's cost alone) as lumps, like those of a token bound (place_lumps).
  bool singletons_as_lumps = false;
  // With singletons_as_lumps, also place the awkward band as lumps, each alone: samples
  // that make batches of at most two whose pairs stay under kAwkwardPairShare of the
  // budget (is_lump). Paired, they are the dearest partners a lump's step can take,
  // yet each leaves its rank idle for a quarter of the step; alone, a run of them can
  // make a step of its own at their level.
  bool awkward_as_lumps = false;
  // Complete the lumps' steps with partners cut to measure (place_fluid_runs) rather
  // than at the budget or evenly (place_runs).
  bool partners_to_measure = false;
  // How partners are cut to measure: none, in the samples' order, the longest first,
  // each piece as many as fit under its cost; otherwise by cut_fluid_pieces, so.
  std::optional<PieceCut> piece_cut;
  // Let the capped samples' steps (work.apart) and the capped samples left over join the
  // leftover, as partners for its lumps and fillers for its final cut, instead of
  // keeping to steps of their own; no planned step is taken back then (short samples
  // that cannot reach the leftover's dearest would have every step taken back).
  bool capped_rejoin = false;
  // Capped samples left over, too few for steps of their own, cut together with the
  // samples of the capped step (work.apart) whose longest sample is longest, instead of
  // joining the leftover, where they stand as light batches beside dearer ones.
  bool capped_merged = false;
  // Deal the unmatched lumps that fill whole steps evenly over them (deal_lump_steps,
  // deal_lumps_evenly) before the other lumps are placed in runs; under a token bound.
  bool deal_lumps = false;
};

// Coarse batches a step takes (dearest first), to be completed with fillers cut to
// `level`, the dearest one's cost.
struct WindowPlanner::CoarseGroup {
  std::vector<Batch> batches;
  double level;
};

// What one window's planning has made so far.
struct WindowPlanner::Work {
  std::vector<Planned> planned;  // whole steps, some of which a final cut may take back
  std::vector<Planned> apart;    // steps of capped samples or lumps, never taken back
  std::vector<Entry> leftover;   // samples in no step yet
  std::vector<Entry> capped;     // fillers a cap or bound keeps below the budget
  bool fillers_short = false;    // too few fillers for the coarse groups (plan_coarse)

  void give_back(const std::vector<Batch>& batches) {
    for (const Batch& b : batches)
      leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
  }
};

}  // namespace evenfeed
