#include "bucketing/epoch_mates.h"

#include "bucketing/batch_dealing.h"
#include "bucketing/token_budget_planner.h"
#include "core/error.h"

namespace evenfeed {

EpochMates::EpochMates(uint64_t samples) : batch_(samples, DealSteer::kNoGroup) {}

void EpochMates::add(const PlanStep& step) {
  for (const RankBatch& batch : step.ranks) {
    if (batch.samples.empty()) continue;
    EVENFEED_CHECK(batches_ < DealSteer::kNoGroup, "an epoch of more than {} batches",
                   DealSteer::kNoGroup - 1);
    for (uint64_t id : batch.samples) batch_[id] = batches_;
    ++batches_;
  }
}

EpochMatesChain::EpochMatesChain(const LengthSource& lengths, const BucketingOptions& options,
                                 uint64_t seed)
    : lengths_(lengths),
      options_(options),
      seed_(seed),
      active_(options.fresh_mates && options.mix_batches &&
              lengths.size() <= kMostSamplesRemembered) {}

std::shared_ptr<const EpochMates> EpochMatesChain::previous(uint32_t epoch, uint32_t world_size) {
  if (epoch == 0 || !active_) return nullptr;
  const uint32_t wanted = epoch - 1;
  const bool linked = latest_ != nullptr && latest_world_size_ == world_size;
  if (linked && latest_epoch_ == wanted) return latest_;
  // From the latest link when it leads here, else from epoch 0.
  uint32_t next = 0;
  std::shared_ptr<const EpochMates> before;
  if (linked && latest_epoch_ < wanted) {
    next = latest_epoch_ + 1;
    before = latest_;
  }
  for (; next <= wanted; ++next) {
    TokenBudgetPlanner planner(lengths_, options_, world_size, PlanState{seed_, next, {}}, before);
    auto mates = std::make_shared<EpochMates>(lengths_.size());
    PlanStep step;
    while (planner.next(step)) mates->add(step);
    before = std::move(mates);
  }
  remember(wanted, world_size, before);
  return latest_;
}

void EpochMatesChain::remember(uint32_t epoch, uint32_t world_size,
                               std::shared_ptr<const EpochMates> mates) {
  latest_ = std::move(mates);
  latest_epoch_ = epoch;
  latest_world_size_ = world_size;
}

}  // namespace evenfeed
