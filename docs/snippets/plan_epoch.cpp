#include "bucketing/token_budget_planner.h"
#include "docs/snippets/snippets.h"
#include "sampler/distributed_sampler.h"

namespace snippets {

// [snippet:plan_epoch]
// A token planner reads lengths through a LengthSource it does not own: keep the two
// together.
struct TokenPlan : evenfeed::StepPlanner {
  TokenPlan(const evenfeed::Dataset& dataset, const evenfeed::BucketingOptions& options,
            uint32_t world, const evenfeed::PlanState& state)
      : lengths(dataset.index().lengths()), planner(lengths, options, world, state) {}
  bool next(evenfeed::PlanStep& step) override { return planner.next(step); }

  evenfeed::SpanLengths lengths;
  evenfeed::TokenBudgetPlanner planner;
};

std::unique_ptr<evenfeed::StepPlanner> plan_epoch(const evenfeed::Dataset& dataset, uint32_t world,
                                                  const evenfeed::PlanState& state) {
  if (dataset.manifest().kind == evenfeed::DatasetKind::kTokens) {
    evenfeed::BucketingOptions options;  // each rank's step: at most 4096 padded tokens
    options.tokens_per_rank = 4096;
    return std::make_unique<TokenPlan>(dataset, options, world, state);
  }
  evenfeed::SamplerOptions options;  // 32 images per rank per step
  options.batch_size = 32;
  return std::make_unique<evenfeed::DistributedSampler>(dataset.size(), world, options, state);
}
// [/snippet]

}  // namespace snippets
