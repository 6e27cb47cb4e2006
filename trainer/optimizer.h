// Optimisers over the flat parameter buffer: SGD with momentum and AdamW (decoupled
// weight decay), with a linear warm-up then cosine decay of the learning rate. Their
// state is flat buffers too, saved whole in checkpoints.
//
// Scaling rule: the gradient is a mean over the global batch (per-rank batch x ranks x
// accumulation), so for SGD scale --lr linearly with the global batch (Goyal et al.,
// with warm-up); for AdamW, roughly with its square root.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace evenfeed {

enum class OptimizerKind { kSgd, kAdamW };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = 0.1;                                    // peak learning rate
  double momentum = 0.9;                              // SGD
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // AdamW
  double weight_decay = 0;    // SGD: L2 added to the gradient; AdamW: decoupled
  uint64_t warmup_steps = 0;  // linear from lr/warmup to lr
  uint64_t total_steps = 1;   // cosine from lr at the end of warm-up to 0 at total
};

// The learning rate of optimiser step `step` (0-based).
double learning_rate(const OptimizerOptions& options, uint64_t step);

class Optimizer {
 public:
  Optimizer(const OptimizerOptions& options, size_t parameters);
  // One update at optimiser step `step` with the averaged gradients.
  void step(std::span<float> params, std::span<const float> grads, uint64_t step);
  // Momentum (SGD) or first and second moments (AdamW), for checkpoints.
  std::vector<std::vector<float>>& state() { return state_; }
  const std::vector<std::vector<float>>& state() const { return state_; }
  const OptimizerOptions& options() const { return options_; }

 private:
  OptimizerOptions options_;
  std::vector<std::vector<float>> state_;
};

}  // namespace evenfeed
