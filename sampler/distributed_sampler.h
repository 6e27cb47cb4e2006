// The plain distributed sampler: a fixed number of samples per rank per step, like
// PyTorch's DistributedSampler with a DataLoader batch size, minus its traps. The epoch
// is an explicit argument (nothing silently repeats last epoch's order); padding for
// the last partial global batch is marked invalid (so evaluation counts each sample
// once); and the state resumes mid-epoch, at the same or another world size, with no
// sample lost or served twice.
#pragma once

#include <cstdint>
#include <memory>

#include "sampler/global_order.h"
#include "sampler/plan.h"

namespace evenfeed {

struct SamplerOptions {
  uint64_t batch_size = 32;  // samples per rank per step
  // true: drop the last partial global batch; false: fill it with padding slots
  // (flagged invalid) so every rank gets a full batch.
  bool drop_last = false;
  OrderOptions order;
};

class DistributedSampler : public StepPlanner {
 public:
  // Plans epoch `state.epoch` for `world_size` ranks, continuing after the steps
  // `state.served` records (at whatever world sizes they were served).
  DistributedSampler(uint64_t num_samples, uint32_t world_size, const SamplerOptions& options,
                     const PlanState& state);

  bool next(PlanStep& step) override;
  // Steps this planner will still yield.
  uint64_t steps_remaining() const;
  // Global order positions served so far (the plain sampler's consumed count).
  uint64_t positions_consumed() const { return position_; }

 private:
  uint64_t num_samples_;
  uint32_t world_size_;
  SamplerOptions options_;
  uint32_t epoch_;
  std::unique_ptr<GlobalOrder> order_;
  uint64_t position_ = 0;
  uint64_t step_ = 0;
};

}  // namespace evenfeed
