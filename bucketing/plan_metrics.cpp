#include "bucketing/plan_metrics.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include "core/quantile.h"

namespace evenfeed {
namespace {

constexpr uint32_t kNoBatch = std::numeric_limits<uint32_t>::max();

ImbalanceSummary summarize(std::vector<double> values) {
  ImbalanceSummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return quantile_of_sorted(values, q); };
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.p50 = at(0.5);
  s.p99 = at(0.99);
  s.max = values.back();
  return s;
}

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

PlanMetrics::PlanMetrics(const LengthSource& lengths, double quadratic_a) : lengths_(lengths) {
  linear_.kind = CostKind::kLinear;
  quadratic_.kind = CostKind::kQuadratic;
  quadratic_.a = quadratic_a;
}

void PlanMetrics::begin_epoch() {
  seen_.assign(lengths_.size(), 0);
  step_means_.clear();
  steps_per_epoch_.push_back(0);
  batch_before_.swap(batch_now_);
  batch_now_.assign(lengths_.size(), kNoBatch);
  batches_this_epoch_ = 0;
  pairs_before_ = pairs_now_;
  pairs_now_ = 0;
  pairs_again_ = 0;
}

void PlanMetrics::add(const PlanStep& step) {
  ++steps_per_epoch_.back();
  if (step.ranks.size() != step.world_size) equal_steps_ = false;
  double linear_max = 0, linear_sum = 0, quad_max = 0, quad_sum = 0, step_tokens = 0,
         step_count = 0;
  std::vector<uint32_t> earlier;
  std::vector<uint64_t> batch_lengths;  // each length read once: a generated one costs a draw
  for (const RankBatch& b : step.ranks) {
    batch_lengths.clear();
    uint64_t longest = 0;
    for (uint64_t id : b.samples) {
      batch_lengths.push_back(lengths_.length(id));
      longest = std::max(longest, batch_lengths.back());
    }
    const double lin = linear_.batch(b.samples.size(), longest),
                 quad = quadratic_.batch(b.samples.size(), longest);
    linear_max = std::max(linear_max, lin);
    linear_sum += lin;
    quad_max = std::max(quad_max, quad);
    quad_sum += quad;
    slot_tokens_ += lin;
    largest_batch_tokens_ = std::max(largest_batch_tokens_, b.samples.size() * longest);
    const uint32_t batch_id = batches_this_epoch_++;
    earlier.clear();
    double real = 0;
    for (size_t k = 0; k < b.samples.size(); ++k) {
      if (!b.slot_valid(k)) continue;
      const uint64_t id = b.samples[k];
      const uint64_t length = batch_lengths[k];
      const double l = static_cast<double>(length);
      real += 1;
      real_tokens_ += l;  // the samples' own linear cost
      useful_quadratic_ += quadratic_.per_sample(length);
      step_tokens += l;
      seen_[id] = static_cast<uint16_t>(std::min<int>(seen_[id] + 1, 65535));
      batch_now_[id] = batch_id;
      if (!batch_before_.empty() && batch_before_[id] != kNoBatch)
        earlier.push_back(batch_before_[id]);
    }
    step_count += real;
    pairs_now_ += real * (real - 1) / 2;
    // Pairs in this batch that shared a batch last epoch too.
    std::sort(earlier.begin(), earlier.end());
    for (size_t i = 0; i < earlier.size();) {
      size_t j = i;
      while (j < earlier.size() && earlier[j] == earlier[i]) ++j;
      const double run = static_cast<double>(j - i);
      pairs_again_ += run * (run - 1) / 2;
      i = j;
    }
  }
  const double ranks = static_cast<double>(step.ranks.size());
  rank_time_linear_ += ranks * linear_max;
  rank_time_quadratic_ += ranks * quad_max;
  if (linear_sum > 0) imbalance_linear_.push_back(linear_max / (linear_sum / ranks));
  if (quad_sum > 0) imbalance_quadratic_.push_back(quad_max / (quad_sum / ranks));
  if (step_count > 0) step_means_.push_back(step_tokens / step_count);
}

void PlanMetrics::end_epoch() {
  uint64_t seen = 0, dropped = 0, duplicated = 0;
  for (uint16_t count : seen_) {
    seen += count > 0;
    dropped += count == 0;
    duplicated += count > 1;
  }
  seen_per_epoch_.push_back(seen);
  dropped_per_epoch_.push_back(dropped);
  duplicated_per_epoch_.push_back(duplicated);
  dropped_total_ += dropped;
  duplicated_total_ += duplicated;
  const size_t n = step_means_.size();
  if (n >= 3) {
    const double m = mean_of(step_means_);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) den += (step_means_[i] - m) * (step_means_[i] - m);
    for (size_t i = 0; i + 1 < n; ++i) num += (step_means_[i] - m) * (step_means_[i + 1] - m);
    lag1_per_epoch_.push_back(den > 0 ? num / den : 0);
  }
  if (epochs_ > 0 && pairs_before_ > 0) repeat_share_.push_back(pairs_again_ / pairs_before_);
  ++epochs_;
}

double PlanMetrics::padding_waste() const {
  return slot_tokens_ > 0 ? 1 - real_tokens_ / slot_tokens_ : 0;
}

ImbalanceSummary PlanMetrics::imbalance(CostKind kind) const {
  return summarize(kind == CostKind::kLinear ? imbalance_linear_ : imbalance_quadratic_);
}

double PlanMetrics::useful_share(CostKind kind) const {
  const bool linear = kind == CostKind::kLinear;
  const double time = linear ? rank_time_linear_ : rank_time_quadratic_;
  return time > 0 ? (linear ? real_tokens_ : useful_quadratic_) / time : 0;
}

double PlanMetrics::lag1() const {
  return mean_of(lag1_per_epoch_);
}

double PlanMetrics::repeated_pair_share() const {
  return mean_of(repeat_share_);
}

nlohmann::json PlanMetrics::report() const {
  auto imbalance_json = [](const ImbalanceSummary& s) {
    return nlohmann::json{{"mean", s.mean}, {"p50", s.p50}, {"p99", s.p99}, {"max", s.max}};
  };
  nlohmann::json j;
  j["epochs"] = epochs_;
  j["steps_per_epoch"] = steps_per_epoch_;
  j["equal_step_counts_across_ranks"] = equal_steps_;
  j["padding_waste"] = padding_waste();
  j["largest_batch_tokens"] = largest_batch_tokens_;
  j["imbalance_linear"] = imbalance_json(imbalance(CostKind::kLinear));
  j["imbalance_quadratic"] = imbalance_json(imbalance(CostKind::kQuadratic));
  j["useful_share_linear"] = useful_share(CostKind::kLinear);
  j["useful_share_quadratic"] = useful_share(CostKind::kQuadratic);
  j["samples_seen_per_epoch"] = seen_per_epoch_;
  j["dropped_per_epoch"] = dropped_per_epoch_;
  j["duplicated_per_epoch"] = duplicated_per_epoch_;
  j["lag1_batch_mean_length"] = lag1();
  j["repeated_pair_share"] =
      epochs_ > 1 ? nlohmann::json(repeated_pair_share()) : nlohmann::json(nullptr);
  return j;
}

}  // namespace evenfeed
