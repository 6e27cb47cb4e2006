// The epoch's unmatched lumps, counted before it is planned, and whether and how far
// whole steps of them should take in the sparse ones.
//
// Under a token bound (BucketingOptions::max_batch_tokens) and the quadratic model, a
// sample longer than half the bound is alone in its batch, and when it costs more than
// any batch of two or more samples can (the lump level), only other such samples come
// near it: an unmatched lump. They reach the planner a few per window, in the global
// order. Those at the budget (documents truncated to it) make a whole step as soon as
// W of them are carried; the sparse ones below it are carried to the epoch's last
// window, where runs of the cost order (plan_lump_runs) leave steps of them out of
// level that no exchange of single batches lowers: 1.8 million sentences under a bound
// of 4,096 tokens at 64 ranks had per epoch six steps at the budget and three steps
// of 0.67-0.99 of it at max/mean 1.100-1.106.
//
// Their lengths are known before the epoch's order is, so the planner counts them
// first (take_lump_census) and, for each world size, decides (plan_lump_spread) how
// far each whole step of lumps should stand below its dearest: as far as the epoch's
// lumps, dealt evenly over the whole steps they fill, put every such step. Each window
// then lets a whole group of lumps swap its cheapest for the carried sparse ones, the
// cheapest first, up to that level (WindowPlanner::spread_sparse_lumps). The lumps
// that do not fill a whole step are the cheapest, nearest the partners that complete
// a step of them at the end, and are kept out of the swaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/length_source.h"

namespace evenfeed {

struct LumpCensus {
  // counts[k]: the unmatched lumps of length shortest + k tokens (lengths cut to the
  // budget). At most tokens_per_rank entries, whatever the dataset's size.
  uint64_t shortest = 0;
  std::vector<uint64_t> counts;
  // The cost of every sample (cut to the budget), unpadded: what W ranks spend in an
  // epoch, W times, were every step level and unpadded.
  double total_cost = 0;
};

// The cost above which a sample is an unmatched lump under `options` (twice the cost of
// a sample of half the token bound), or a negative value when none can be: no token
// bound, or a cost model under which a pair reaches the budget (linear).
double unmatched_lump_level(const BucketingOptions& options);

// One pass over `lengths`; empty when unmatched_lump_level says none can be.
LumpCensus take_lump_census(const LengthSource& lengths, const BucketingOptions& options);

// How whole steps of unmatched lumps take in the sparse ones at `world_size` ranks.
struct LumpSpread {
  // A whole group of lumps takes sparser ones while its max/mean stays at most this
  // (0: never): kSpreadMargin above the max/mean of every whole step were the dearest
  // lumps that fill whole steps dealt evenly over them.
  double most_ratio = 0;
  // Lumps costing at most this are never taken: the cheapest, which do not fill a whole
  // step (0 when the lumps divide by the world size).
  double reserve_cost = 0;
};

// Spreading is chosen only where runs of the cost order cut W at a time would leave a
// whole step above kSpreadAbove (the p99 target), and the steps it makes take at most
// kSpreadTimeShare of the epoch longer (each whole step then costs its dearest lump;
// the runs' steps below the budget cost less): both measured on the census alone.
inline constexpr double kSpreadAbove = 1.10;
inline constexpr double kSpreadTimeShare = 0.005;
// The sparse lumps arrive at random: a group that takes only its even share leaves
// those that come after the last whole group for the epoch's end, with fewer lumps at
// the budget beside them (60,000 sentences, 48 documents at the budget and 8 sparse
// ones at 8 ranks: worst step 1.12-1.15 taking the even share, 1.05-1.06 taking 2%
// more; 1.07-1.08 at 1%, 1.06-1.08 at 5%).
inline constexpr double kSpreadMargin = 0.02;
LumpSpread plan_lump_spread(const LumpCensus& census, const CostModel& cost, size_t world_size);

}  // namespace evenfeed
