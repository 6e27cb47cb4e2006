// What users would run instead, planned in the same run so `evenfeed plan` can show
// the figures side by side:
// - TorchStylePlanner: PyTorch's DistributedSampler (shuffle, pad the index list with
//   repeated samples to a multiple of W, rank r takes every W-th) with a fixed batch
//   size; the last batch of each rank may be short.
// - SortedBudgetPlanner: fairseq-style token budgets: the whole dataset sorted by
//   length once, packed greedily under the budget (samples longer than the budget are
//   dropped), batches fixed for the whole run; each epoch shuffles batch order and deals
//   W batches per step, the last step completed with empty batches.
#pragma once

#include <cstdint>
#include <vector>

#include "bucketing/cost_model.h"
#include "bucketing/length_source.h"
#include "sampler/plan.h"

namespace evenfeed {

class TorchStylePlanner : public StepPlanner {
 public:
  TorchStylePlanner(uint64_t num_samples, uint32_t world_size, uint64_t batch_size, uint64_t seed,
                    uint32_t epoch);
  bool next(PlanStep& step) override;

 private:
  std::vector<uint64_t> indices_;  // padded, shuffled
  uint32_t world_size_;
  uint64_t batch_size_, per_rank_, step_ = 0;
  uint32_t epoch_;
};

class SortedBudgetPlanner : public StepPlanner {
 public:
  // The batches are a function of the lengths and budget only (as in fairseq);
  // `epoch` only reorders them.
  SortedBudgetPlanner(const LengthSource& lengths, uint64_t tokens_per_rank, uint32_t world_size,
                      uint64_t seed, uint32_t epoch);
  bool next(PlanStep& step) override;

 private:
  std::vector<std::vector<uint64_t>> batches_;
  uint32_t world_size_;
  uint64_t step_ = 0;
  uint32_t epoch_;
};

}  // namespace evenfeed
