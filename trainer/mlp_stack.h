// Fully connected layers with ReLU between them and softmax cross-entropy on top: the
// shared body of both models. Weights are out x in (PyTorch's layout), each followed
// by its bias, from a given offset of the flat parameter buffer. The GEMMs go through
// BLAS (cblas_sgemm); this CPU path is the reference any faster path is tested against.
#pragma once

#include <span>
#include <vector>

#include "trainer/model.h"

namespace evenfeed {

class MlpStack {
 public:
  // dims: {input, hidden..., classes}; parameters start at `offset`.
  MlpStack(std::vector<int> dims, size_t offset);
  size_t parameter_count() const;  // of this stack alone
  void initialize(std::span<float> params, uint64_t seed) const;

  // Forward over `rows` inputs, then the loss over real rows; returns its sums and
  // leaves d(loss sum)/d(logits) for backward.
  LossSums forward(std::span<const float> params, const float* input, size_t rows,
                   const int32_t* labels, const uint8_t* valid);
  // Backward from the loss: adds parameter gradients (announcing each finished layer
  // to `ready`) and, when `input_grad` is given, writes d(loss sum)/d(input).
  void backward(std::span<const float> params, std::span<float> grads, const float* input,
                size_t rows, float* input_grad, const GradientsReady& ready);

  const std::vector<int>& dims() const { return dims_; }
  // Where layer `layer`'s weights start in the flat buffer (its bias follows them).
  size_t weight_offset(size_t layer) const;

 private:
  std::vector<int> dims_;
  size_t offset_;
  std::vector<std::vector<float>> activations_;  // per layer output (post-ReLU)
  std::vector<float> delta_, next_delta_;
};

}  // namespace evenfeed
