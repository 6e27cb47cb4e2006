// The length-bucketing planner: an epoch as a stream of steps, each with exactly one
// token-budget batch per rank of near-equal cost, every sample exactly once, nothing
// dropped. It walks the epoch's global order in windows (WindowPlanner), holding
// O(window) state, and resumes from a PlanState at the same or another world size:
// the served steps are replayed (cheap, deterministic), and at a world-size change the
// current window's unserved steps dissolve back into the carry and are re-planned.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/length_source.h"
#include "bucketing/window_planner.h"
#include "sampler/global_order.h"
#include "sampler/plan.h"

namespace evenfeed {

// The window BucketingOptions::window = 0 stands for, for these lengths and options.
uint64_t automatic_window(const LengthSource& lengths, const BucketingOptions& options);

class TokenBudgetPlanner : public StepPlanner {
 public:
  // Throws Error for a world size of 0, an empty dataset, a zero length, a sample
  // longer than the budget (unless options.oversize is kTruncate) or a state that does
  // not fit this epoch.
  TokenBudgetPlanner(const LengthSource& lengths, const BucketingOptions& options,
                     uint32_t world_size, const PlanState& state);

  bool next(PlanStep& step) override;

 private:
  bool refill();
  void switch_world_size(uint32_t world_size);
  PlanItem item(uint64_t id) const;

  const LengthSource& lengths_;
  BucketingOptions options_;
  uint64_t seed_;
  uint32_t epoch_;
  std::unique_ptr<GlobalOrder> order_;
  uint64_t windows_ = 1;
  uint64_t window_index_ = 0;
  uint64_t position_ = 0;  // next global-order position to read
  std::vector<PlanItem> carry_;
  std::deque<StepBatches> pending_;
  uint32_t world_size_ = 0;
  std::unique_ptr<WindowPlanner> planner_;
  uint64_t step_ = 0;
  double last_mean_ = -1;
};

}  // namespace evenfeed
