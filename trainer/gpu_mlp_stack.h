// MlpStack's GPU twin: the same layers, parameter layout, loss and gradients, with
// the products on cuBLAS and the rest in cuda/train_kernels. Parameters, gradients,
// inputs and labels are device memory; everything is queued on one stream, and only
// collect() waits for it. The CPU MlpStack is the reference this is tested against
// (tests/trainer/gpu_model_test.cpp).
#pragma once

#include <span>
#include <vector>

#include "cuda/device_array.h"
#include "cuda/gpu_blas.h"
#include "cuda/train_kernels.h"
#include "trainer/mlp_stack.h"

namespace evenfeed {

class GpuMlpStack {
 public:
  // dims: {input, hidden..., classes}; parameters start at `offset`.
  GpuMlpStack(std::vector<int> dims, size_t offset, GpuStream stream);
  size_t parameter_count() const { return layout_.parameter_count(); }
  // The CPU stack with the same layout (its initialize() fills host parameters).
  const MlpStack& layout() const { return layout_; }

  // Queues the forward pass and the loss; the loss sums add up on the device until
  // collect(). Leaves d(loss sum)/d(logits) for backward.
  void forward(const float* params, const float* input, size_t rows, const int32_t* labels,
               const uint8_t* valid);
  // Queues backward, announcing each layer to `ready` once its gradient kernels are
  // queued (collectives queued then run after them: NcclCommunicator orders its stream
  // after this one). `input_grad` (optional) receives d(loss sum)/d(input).
  void backward(const float* params, float* grads, const float* input, size_t rows,
                float* input_grad, const GradientsReady& ready);
  // Waits for the stream and returns the loss sums since the last collect(). Throws
  // Error if a label was outside the classes.
  LossSums collect();

 private:
  MlpStack layout_;
  GpuStream stream_;
  GpuBlas blas_;
  std::vector<DeviceArray<float>> activations_;  // per layer output (post-ReLU)
  DeviceArray<float> delta_, next_delta_;
  DeviceArray<double> row_loss_;
  DeviceArray<int32_t> row_flags_;
  DeviceArray<GpuLossTotals> totals_;
};

}  // namespace evenfeed
