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

bool steers_from_previous_mates(const BucketingOptions& options, const LengthSource& lengths) {
  return options.fresh_mates && options.mix_batches && lengths.size() <= kMostSamplesRemembered;
}

EpochMatesChain::EpochMatesChain(const LengthSource& lengths, const BucketingOptions& options,
                                 uint64_t seed)
    : lengths_(lengths),
      options_(options),
      seed_(seed),
      active_(steers_from_previous_mates(options, lengths)) {}

std::shared_ptr<const EpochMates> EpochMatesChain::previous(uint32_t epoch, uint32_t world_size) {
  if (epoch == 0 || !active_) return nullptr;
  const uint32_t wanted = epoch - 1;
  // The kept link nearest below (or at) the wanted one, at this world size.
  const Link* from = nullptr;
  for (const Link& link : links_) {
    if (link.world_size == world_size && link.epoch <= wanted &&
        (from == nullptr || link.epoch > from->epoch))
      from = &link;
  }
  if (from != nullptr && from->epoch == wanted) return from->mates;
  uint32_t next = from != nullptr ? from->epoch + 1 : 0;
  std::shared_ptr<const EpochMates> before = from != nullptr ? from->mates : nullptr;
  for (; next <= wanted; ++next) {
    TokenBudgetPlanner planner(lengths_, options_, world_size, PlanState{seed_, next, {}}, before);
    auto mates = std::make_shared<EpochMates>(lengths_.size());
    PlanStep step;
    while (planner.next(step)) mates->add(step);
    before = std::move(mates);
  }
  remember(wanted, world_size, before);
  return before;
}

void EpochMatesChain::remember(uint32_t epoch, uint32_t world_size,
                               std::shared_ptr<const EpochMates> mates) {
  std::erase_if(links_, [&](const Link& link) {
    return link.epoch == epoch && link.world_size == world_size;
  });
  if (links_.size() == kLinksKept) links_.erase(links_.begin());
  links_.push_back({epoch, world_size, std::move(mates)});
}

}  // namespace evenfeed
