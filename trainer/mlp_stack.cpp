#include "trainer/mlp_stack.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/philox.h"

namespace evenfeed {

MlpStack::MlpStack(std::vector<int> dims, size_t offset) : dims_(std::move(dims)), offset_(offset) {
  EVENFEED_CHECK(dims_.size() >= 2, "an MLP needs at least an input and an output size");
  for (int d : dims_) EVENFEED_CHECK(d > 0, "MLP layer sizes must be positive, got {}", d);
  activations_.resize(dims_.size() - 1);
}

size_t MlpStack::weight_offset(size_t layer) const {
  size_t at = offset_;
  for (size_t l = 0; l < layer; ++l) at += static_cast<size_t>(dims_[l] + 1) * dims_[l + 1];
  return at;
}

size_t MlpStack::parameter_count() const {
  return weight_offset(dims_.size() - 1) - offset_;
}

void MlpStack::initialize(std::span<float> params, uint64_t seed) const {
  // PyTorch's nn.Linear default: weights and biases uniform in +-1/sqrt(fan_in).
  for (size_t l = 0; l + 1 < dims_.size(); ++l) {
    CounterRng rng(seed, RngStream::kModelInit, 0, offset_ + l);
    const double bound = 1.0 / std::sqrt(static_cast<double>(dims_[l]));
    const size_t n = static_cast<size_t>(dims_[l] + 1) * dims_[l + 1];
    float* w = params.data() + weight_offset(l);
    for (size_t i = 0; i < n; ++i) w[i] = static_cast<float>(rng.uniform(-bound, bound));
  }
}

LossSums MlpStack::forward(std::span<const float> params, const float* input, size_t rows,
                           const int32_t* labels, const uint8_t* valid) {
  const int m = static_cast<int>(rows);
  const float* in = input;
  for (size_t l = 0; l + 1 < dims_.size(); ++l) {
    const int k = dims_[l], n = dims_[l + 1];
    const float* w = params.data() + weight_offset(l);
    const float* b = w + static_cast<size_t>(k) * n;
    std::vector<float>& out = activations_[l];
    out.resize(rows * n);
    for (size_t r = 0; r < rows; ++r) std::copy(b, b + n, out.begin() + r * n);
    // out (m x n) += in (m x k) * W^T (k x n)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, in, k, w, k, 1.0f,
                out.data(), n);
    if (l + 2 < dims_.size())
      for (float& v : out) v = std::max(v, 0.0f);
    in = out.data();
  }
  // Softmax cross-entropy; delta_ = d(sum of losses)/d(logits), zero on padding rows.
  const int classes = dims_.back();
  const std::vector<float>& logits = activations_.back();
  delta_.assign(rows * classes, 0.0f);
  LossSums sums;
  for (size_t r = 0; r < rows; ++r) {
    if (valid != nullptr && valid[r] == 0) continue;
    const float* z = logits.data() + r * classes;
    const int label = labels[r];
    EVENFEED_CHECK(label >= 0 && label < classes,
                   "sample label {} is outside the model's {} classes; the dataset needs labels "
                   "0..{}",
                   label, classes, classes - 1);
    const float top = *std::max_element(z, z + classes);
    double total = 0;
    for (int c = 0; c < classes; ++c) total += std::exp(static_cast<double>(z[c] - top));
    const double log_total = std::log(total);
    sums.loss += log_total - (z[label] - top);
    sums.samples += 1;
    sums.correct += (std::max_element(z, z + classes) - z) == label;
    float* d = delta_.data() + r * classes;
    for (int c = 0; c < classes; ++c)
      d[c] = static_cast<float>(std::exp(static_cast<double>(z[c] - top) - log_total));
    d[label] -= 1.0f;
  }
  return sums;
}

void MlpStack::backward(std::span<const float> params, std::span<float> grads, const float* input,
                        size_t rows, float* input_grad, const GradientsReady& ready) {
  const int m = static_cast<int>(rows);
  for (size_t l = dims_.size() - 1; l-- > 0;) {
    const int k = dims_[l], n = dims_[l + 1];
    const float* in = l == 0 ? input : activations_[l - 1].data();
    const float* w = params.data() + weight_offset(l);
    float* dw = grads.data() + weight_offset(l);
    float* db = dw + static_cast<size_t>(k) * n;
    // dW (n x k) += delta^T (n x m) * in (m x k); db += column sums of delta.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, k, m, 1.0f, delta_.data(), n, in, k,
                1.0f, dw, k);
    for (size_t r = 0; r < rows; ++r)
      for (int j = 0; j < n; ++j) db[j] += delta_[r * n + j];
    if (ready) ready(weight_offset(l));
    if (l == 0 && input_grad == nullptr) break;
    // d(in) (m x k) = delta (m x n) * W (n x k), then through the ReLU that made `in`.
    float* target = l == 0 ? input_grad : nullptr;
    if (target == nullptr) {
      next_delta_.resize(rows * k);
      target = next_delta_.data();
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, n, 1.0f, delta_.data(), n, w, k,
                0.0f, target, k);
    if (l == 0) break;
    for (size_t i = 0; i < rows * k; ++i)
      if (in[i] <= 0.0f) next_delta_[i] = 0.0f;
    delta_.swap(next_delta_);
  }
}

}  // namespace evenfeed
