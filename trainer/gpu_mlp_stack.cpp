#include "trainer/gpu_mlp_stack.h"

#include "core/error.h"

namespace evenfeed {
namespace {

void reset_totals(DeviceArray<GpuLossTotals>& totals) {
  const GpuLossTotals zero;
  totals.upload(std::span<const GpuLossTotals>(&zero, 1));
}

}  // namespace

GpuMlpStack::GpuMlpStack(std::vector<int> dims, size_t offset, GpuStream stream)
    : layout_(std::move(dims), offset), stream_(stream), blas_(stream) {
  activations_.resize(layout_.dims().size() - 1);
  reset_totals(totals_);
}

void GpuMlpStack::forward(const float* params, const float* input, size_t rows,
                          const int32_t* labels, const uint8_t* valid) {
  if (rows == 0) return;
  const std::vector<int>& dims = layout_.dims();
  const int m = static_cast<int>(rows);
  const float* in = input;
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    const int k = dims[l], n = dims[l + 1];
    const float* w = params + layout_.weight_offset(l);
    const float* b = w + static_cast<size_t>(k) * n;
    DeviceArray<float>& out = activations_[l];
    out.grow(rows * n);
    gpu_broadcast_rows(out.data(), b, rows, n, stream_);
    // out (m x n) += in (m x k) * W^T (k x n), as the CPU stack.
    blas_.sgemm(false, true, m, n, k, 1.0f, in, k, w, k, 1.0f, out.data(), n);
    if (l + 2 < dims.size()) gpu_relu(out.data(), rows * n, stream_);
    in = out.data();
  }
  const int classes = dims.back();
  delta_.grow(rows * classes);
  row_loss_.grow(rows);
  row_flags_.grow(rows);
  gpu_softmax_cross_entropy(activations_.back().data(), labels, valid, rows, classes, delta_.data(),
                            row_loss_.data(), row_flags_.data(), stream_);
  gpu_sum_loss(row_loss_.data(), row_flags_.data(), rows, totals_.data(), stream_);
}

void GpuMlpStack::backward(const float* params, float* grads, const float* input, size_t rows,
                           float* input_grad, const GradientsReady& ready) {
  const std::vector<int>& dims = layout_.dims();
  const int m = static_cast<int>(rows);
  for (size_t l = dims.size() - 1; l-- > 0;) {
    const int k = dims[l], n = dims[l + 1];
    const float* in = l == 0 ? input : activations_[l - 1].data();
    const float* w = params + layout_.weight_offset(l);
    float* dw = grads + layout_.weight_offset(l);
    float* db = dw + static_cast<size_t>(k) * n;
    if (rows > 0) {
      // dW (n x k) += delta^T (n x m) * in (m x k); db += column sums of delta.
      blas_.sgemm(true, false, n, k, m, 1.0f, delta_.data(), n, in, k, 1.0f, dw, k);
      gpu_add_column_sums(delta_.data(), rows, n, db, stream_);
    }
    if (ready) ready(layout_.weight_offset(l));
    if (rows == 0 || (l == 0 && input_grad == nullptr)) continue;
    // d(in) (m x k) = delta (m x n) * W (n x k), then through the ReLU that made `in`.
    float* target = input_grad;
    if (l > 0) {
      next_delta_.grow(rows * k);
      target = next_delta_.data();
    }
    blas_.sgemm(false, false, m, k, n, 1.0f, delta_.data(), n, w, k, 0.0f, target, k);
    if (l == 0) break;
    gpu_relu_backward(next_delta_.data(), in, rows * k, stream_);
    std::swap(delta_, next_delta_);
  }
}

LossSums GpuMlpStack::collect() {
  gpu_stream_synchronize(stream_);
  const GpuLossTotals totals = totals_.download(1)[0];
  reset_totals(totals_);
  EVENFEED_CHECK(totals.bad_labels == 0,
                 "{} sample label(s) are outside the model's {} classes; the dataset needs labels "
                 "0..{}",
                 totals.bad_labels, layout_.dims().back(), layout_.dims().back() - 1);
  LossSums sums;
  sums.loss = totals.loss;
  sums.samples = totals.samples;
  sums.correct = totals.correct;
  return sums;
}

}  // namespace evenfeed
