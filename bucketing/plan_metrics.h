// The figures `evenfeed plan` reports for any plan (ours or a baseline), accumulated
// step by step: padding waste, per-step rank imbalance under both cost models, samples
// seen / dropped / duplicated per epoch, lag-1 correlation of step mean length, the
// share of sample pairs batched together in one epoch that meet again in the next, the
// largest batch in padded tokens, and the useful share of the ranks' time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "bucketing/cost_model.h"
#include "bucketing/length_source.h"
#include "sampler/plan.h"

namespace evenfeed {

struct ImbalanceSummary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

class PlanMetrics {
 public:
  // Lengths as `lengths` gives them (a TruncatedLengths counts samples as cut).
  PlanMetrics(const LengthSource& lengths, double quadratic_a);

  void begin_epoch();
  void add(const PlanStep& step);
  void end_epoch();

  nlohmann::json report() const;
  double padding_waste() const;
  // The most padded tokens (count x longest) any one batch held: what memory a rank
  // needs for its batch.
  uint64_t largest_batch_tokens() const { return largest_batch_tokens_; }
  ImbalanceSummary imbalance(CostKind kind) const;
  // What share of the ranks' time goes to the samples' own cost: a step lasts as long as
  // its dearest batch (every rank waits for it at the all-reduce), so the ranks' time is
  // W x the sum over steps of that batch's cost; the rest is padding and waiting. It
  // falls with padding and with imbalance alike, and only a plan that shortens steps
  // raises it: padding a light batch lowers max/mean but not this.
  double useful_share(CostKind kind) const;
  double lag1() const;                 // mean over epochs with at least 3 steps
  double repeated_pair_share() const;  // mean over consecutive epoch pairs
  uint64_t total_dropped() const { return dropped_total_; }
  uint64_t total_duplicated() const { return duplicated_total_; }
  const std::vector<uint64_t>& steps_per_epoch() const { return steps_per_epoch_; }
  bool equal_step_counts() const { return equal_steps_; }

 private:
  const LengthSource& lengths_;
  CostModel linear_, quadratic_;
  // Per step.
  std::vector<double> imbalance_linear_, imbalance_quadratic_;
  double real_tokens_ = 0, slot_tokens_ = 0;
  double useful_quadratic_ = 0;  // the samples' own quadratic cost (linear: real_tokens_)
  double rank_time_linear_ = 0, rank_time_quadratic_ = 0;  // W x each step's dearest
  uint64_t largest_batch_tokens_ = 0;
  // Per epoch.
  std::vector<uint64_t> steps_per_epoch_;
  std::vector<uint16_t> seen_;
  std::vector<double> step_means_;
  std::vector<double> lag1_per_epoch_;
  uint64_t dropped_total_ = 0, duplicated_total_ = 0;
  std::vector<uint64_t> seen_per_epoch_, dropped_per_epoch_, duplicated_per_epoch_;
  bool equal_steps_ = true;
  // Pairs: the batch each sample was in, this epoch and the previous one.
  std::vector<uint32_t> batch_now_, batch_before_;
  uint32_t batches_this_epoch_ = 0;
  double pairs_now_ = 0, pairs_before_ = 0, pairs_again_ = 0;
  std::vector<double> repeat_share_;
  int epochs_ = 0;
};

}  // namespace evenfeed
