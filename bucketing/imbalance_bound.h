// A lower bound, from the lengths alone, on the worst step's rank imbalance (max/mean
// of the ranks' costs) of any plan: where the data makes a level plan impossible, the
// report shows how close to level a plan can get, and so how close ours got.
//
// Two kinds of corpora bound it above 1: more samples dear enough to fill most of a
// rank alone than the rest of the epoch's work can partner (heavy tails under quadratic
// cost, samples cut to the budget), and fewer samples than ranks. Elsewhere the bound is
// near 1 and says only that the data does not stand in the way.
//
// The argument. A batch costs its count times its longest sample's cost (cost_model.h),
// so a sample that costs more than half the budget is alone in its batch in every plan,
// and so is one longer than half a token bound: call these lumps. Everything else is
// fluid, relaxed to work divisible at will. Take the t dearest lumps, the least of them
// costing c_t. A step holds at most W lumps, so they lie in s >= q = ceil(t / W) steps,
// each of whose dearest batch costs at least c_t. Those s steps hold at most the s W
// dearest lumps, all the fluid F, and what padding adds to it, I (the padded slots a plan
// may have, each costing at most a + 2 x the longest fluid sample more than the slot's
// own sample under quadratic cost, one token under linear). Their dearest batches are
// not all c_t: at least j of the s steps hold one of the (j - 1) W + 1 dearest lumps,
// so the j-th dearest step's dearest batch is at least h_j = c_((j-1) W + 1) for j <= q,
// and c_t for the rest. If every one of the s steps had max/mean at most R, each would
// cost at least W h_j / R, so R >= W (h_1 + ... + h_s) / (top(s W) + F + I). The plan
// chooses s; the bound takes the least over s >= q, and the most over t. (Until
// 2026-12-03 every h_j was taken as c_t: lower where the dearest lumps are far dearer
// than the t-th, as documents cut to the budget beside the lengths just over half a
// token bound.) With no lumps, t = 1 and the dearest sample play the same part.
//
// What a rank without a lump can hold is bounded too, by its batch's longest sample: a
// batch whose longest sample costs c holds at most n = 1 / c samples (the budget), fewer
// under a sample cap or a token bound, so it costs at most its head's reach n c. The
// s W - j ranks of those steps that hold no lump each have a head of their own, so
// together they hold at most the s W - j largest reaches of the fluid samples. (Until
// 2026-12-04 every such rank was allowed the largest reach any fluid length could have:
// under a token bound that is the longest fluid sample's, though a corpus of sentences
// has few of those.)
//
// It ignores that fluid samples are indivisible, and sample caps other than one the
// user sets, so real plans can be further from level than this; it is a bound, not an
// estimate.
//
// Summing over the s steps lets one step's room make up for another's shortfall, which
// no plan can do. A second argument takes the lumps one step at a time
// (lump_step_bound.h); worst_step() gives the larger of the two.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "bucketing/cost_model.h"

namespace evenfeed {

struct ImbalanceBoundOptions {
  uint32_t world_size = 1;
  uint64_t tokens_per_rank = 4096;
  CostModel cost;
  // A token bound (BucketingOptions::max_batch_tokens; 0: none): samples longer than
  // half of it are lumps too.
  uint64_t max_batch_tokens = 0;
  // A sample cap every plan keeps (0: none): the cap a user sets, not one a planner
  // chooses.
  uint64_t max_batch_size = 0;
  // The padding share (padded slots over all slots) the plans bounded may have: the more
  // padding, the more a plan can raise its light batches' costs. The report passes the
  // padding target, 2%.
  double padding_share = 0.02;
};

// Fed every sample's length as planned (cut to the budget when the plan truncates),
// then asked for the bound.
class ImbalanceBound {
 public:
  explicit ImbalanceBound(const ImbalanceBoundOptions& options);

  void add(uint64_t length);
  // No plan of these samples for options.world_size ranks, padding at most
  // options.padding_share of its slots, has every step's max/mean below this (>= 1).
  double worst_step() const;
  uint64_t lumps() const { return lump_count_; }

 private:
  bool is_lump(uint64_t length) const;
  // In budgets: one budget is the cost of one sample of tokens_per_rank tokens.
  double cost(uint64_t length) const;
  double fluid_with_padding() const;
  double reach(uint64_t length) const;
  uint64_t longest_fluid() const { return fluid_lengths_.empty() ? 0 : fluid_lengths_.size() - 1; }

  ImbalanceBoundOptions options_;
  double budget_;
  std::map<uint64_t, uint64_t, std::greater<>> lumps_;  // length -> count, longest first
  uint64_t lump_count_ = 0;
  double fluid_cost_ = 0;  // in budgets
  double tokens_ = 0;      // every sample's tokens, lumps' too
  // How many fluid samples have each length (index), up to the longest (the last
  // index): a flat count, since every sample is added (a map cost 4% of planning 10
  // million samples).
  std::vector<uint64_t> fluid_lengths_;
};

}  // namespace evenfeed
