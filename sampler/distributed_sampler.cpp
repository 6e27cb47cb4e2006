#include "sampler/distributed_sampler.h"

#include <algorithm>

#include "core/error.h"

namespace evenfeed {

DistributedSampler::DistributedSampler(uint64_t num_samples, uint32_t world_size,
                                       const SamplerOptions& options, const PlanState& state)
    : num_samples_(num_samples), world_size_(world_size), options_(options), epoch_(state.epoch) {
  check_world(world_size, num_samples);
  EVENFEED_CHECK(options.batch_size > 0, "batch size must be at least 1, got 0");
  order_ = make_global_order(options.order, num_samples, state.seed, state.epoch);
  // Served steps consumed whole global batches at their own world size.
  for (const Segment& s : state.served) {
    EVENFEED_CHECK(s.world_size > 0, "sampler state holds a segment with world size 0");
    world_size_ = s.world_size;
    const uint64_t available = steps_remaining();
    EVENFEED_CHECK(s.steps <= available,
                   "sampler state says {} steps were served at world size {}, but only {} remained "
                   "in epoch {}; "
                   "the state does not belong to this dataset or these options",
                   s.steps, s.world_size, available, epoch_);
    position_ += s.steps * s.world_size * options.batch_size;
    step_ += s.steps;
  }
  world_size_ = world_size;
}

uint64_t DistributedSampler::steps_remaining() const {
  if (position_ >= num_samples_) return 0;
  const uint64_t left = num_samples_ - position_,
                 global = static_cast<uint64_t>(world_size_) * options_.batch_size;
  return options_.drop_last ? left / global : (left + global - 1) / global;
}

bool DistributedSampler::next(PlanStep& step) {
  if (steps_remaining() == 0) return false;
  const uint64_t batch = options_.batch_size;
  step.epoch = epoch_;
  step.step = step_++;
  step.world_size = world_size_;
  step.ranks.assign(world_size_, {});
  for (uint32_t r = 0; r < world_size_; ++r) {
    RankBatch& b = step.ranks[r];
    b.samples.resize(batch);
    bool padded = false;
    for (uint64_t k = 0; k < batch; ++k) {
      const uint64_t p = position_ + r * batch + k;
      // Padding repeats samples from the start of the order but is flagged invalid.
      b.samples[k] = order_->at(p < num_samples_ ? p : (p - num_samples_) % num_samples_);
      padded = padded || p >= num_samples_;
    }
    if (padded) {
      b.valid.resize(batch);
      for (uint64_t k = 0; k < batch; ++k) b.valid[k] = position_ + r * batch + k < num_samples_;
    }
  }
  position_ += static_cast<uint64_t>(world_size_) * batch;
  return true;
}

}  // namespace evenfeed
