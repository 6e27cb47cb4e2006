// What one rank's batch costs. Batches are padded to their longest sample, so a batch
// of n samples whose longest has L tokens costs n * f(L): f(L) = L for the linear model
// (tokens, memory), f(L) = a*L + L^2 for the quadratic one (a transformer's compute:
// a*L for the projections and MLP, with a about 6 x the model width, plus L^2 for
// attention). The per-rank budget is the cost of one sample of the budget's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace evenfeed {

enum class CostKind { kLinear, kQuadratic };

struct CostModel {
  CostKind kind = CostKind::kLinear;
  double a = 2048;  // quadratic model: per-token linear coefficient

  double per_sample(uint64_t padded_length) const {
    const double l = static_cast<double>(padded_length);
    return kind == CostKind::kLinear ? l : a * l + l * l;
  }
  double batch(uint64_t count, uint64_t longest) const {
    return static_cast<double>(count) * per_sample(longest);
  }
  // The cost limit for a per-rank budget of `tokens_per_rank` tokens.
  double budget(uint64_t tokens_per_rank) const { return per_sample(tokens_per_rank); }
};

// A step's rank imbalance, max/mean of its ranks' costs: its dearest batch against the
// mean of `width` ranks that cost `sum` together. A step of no work is level (1).
inline double step_imbalance(double dearest, double sum, size_t width) {
  return sum > 0 ? dearest * static_cast<double>(width) / sum : 1.0;
}

CostKind parse_cost_kind(const std::string& name);  // "linear" or "quadratic"
const char* cost_kind_name(CostKind kind);

}  // namespace evenfeed
