#include "trainer/optimizer.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace evenfeed {

double learning_rate(const OptimizerOptions& o, uint64_t step) {
  if (step < o.warmup_steps)
    return o.lr * static_cast<double>(step + 1) / static_cast<double>(o.warmup_steps);
  const uint64_t decay_steps = o.total_steps > o.warmup_steps ? o.total_steps - o.warmup_steps : 1;
  const double progress =
      std::min(1.0, static_cast<double>(step - o.warmup_steps) / static_cast<double>(decay_steps));
  return o.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

Optimizer::Optimizer(const OptimizerOptions& options, size_t parameters) : options_(options) {
  EVENFEED_CHECK(options.lr > 0, "the learning rate must be positive, got {}", options.lr);
  state_.assign(options.kind == OptimizerKind::kSgd ? 1 : 2, std::vector<float>(parameters, 0.0f));
}

void Optimizer::step(std::span<float> params, std::span<const float> grads, uint64_t step) {
  const float lr = static_cast<float>(learning_rate(options_, step));
  const float decay = static_cast<float>(options_.weight_decay);
  const size_t n = params.size();
  if (options_.kind == OptimizerKind::kSgd) {
    const float momentum = static_cast<float>(options_.momentum);
    float* velocity = state_[0].data();
    for (size_t i = 0; i < n; ++i) {
      velocity[i] = momentum * velocity[i] + grads[i] + decay * params[i];
      params[i] -= lr * velocity[i];
    }
    return;
  }
  const double t = static_cast<double>(step + 1);
  const float b1 = static_cast<float>(options_.beta1), b2 = static_cast<float>(options_.beta2);
  const float correction1 = static_cast<float>(1.0 - std::pow(options_.beta1, t));
  const float correction2 = static_cast<float>(1.0 - std::pow(options_.beta2, t));
  const float eps = static_cast<float>(options_.epsilon);
  float* m = state_[0].data();
  float* v = state_[1].data();
  for (size_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * grads[i];
    v[i] = b2 * v[i] + (1 - b2) * grads[i] * grads[i];
    const float update = (m[i] / correction1) / (std::sqrt(v[i] / correction2) + eps);
    params[i] -= lr * (update + decay * params[i]);
  }
}

}  // namespace evenfeed
