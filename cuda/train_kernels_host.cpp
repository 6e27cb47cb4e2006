// The host-only build's trainer kernels (nvcc not found at configure time): each
// says so and throws.
#include "core/error.h"
#include "cuda/train_kernels.h"

namespace evenfeed {
namespace {

[[noreturn]] void no_cuda(const char* call) {
  fail(
      "{} needs a GPU, but evenfeed was built without CUDA (nvcc not found); train with "
      "--device cpu",
      call);
}

}  // namespace

void gpu_broadcast_rows(float*, const float*, size_t, int, GpuStream) {
  no_cuda("gpu_broadcast_rows");
}

void gpu_relu(float*, size_t, GpuStream) {
  no_cuda("gpu_relu");
}

void gpu_relu_backward(float*, const float*, size_t, GpuStream) {
  no_cuda("gpu_relu_backward");
}

void gpu_add_column_sums(const float*, size_t, int, float*, GpuStream) {
  no_cuda("gpu_add_column_sums");
}

void gpu_softmax_cross_entropy(const float*, const int32_t*, const uint8_t*, size_t, int, float*,
                               double*, int32_t*, GpuStream) {
  no_cuda("gpu_softmax_cross_entropy");
}

void gpu_sum_loss(const double*, const int32_t*, size_t, GpuLossTotals*, GpuStream) {
  no_cuda("gpu_sum_loss");
}

void gpu_embedding_mean(const float*, uint32_t, int, const int32_t*, const uint8_t*, const uint8_t*,
                        size_t, uint32_t, float*, float*, uint64_t*, GpuStream) {
  no_cuda("gpu_embedding_mean");
}

void gpu_embedding_mean_backward(const float*, const float*, int, const int32_t*, const uint8_t*,
                                 size_t, uint32_t, uint32_t, float*, GpuStream) {
  no_cuda("gpu_embedding_mean_backward");
}

void gpu_scale(float*, size_t, float, GpuStream) {
  no_cuda("gpu_scale");
}

void gpu_sgd_step(float*, const float*, float*, size_t, float, float, float, GpuStream) {
  no_cuda("gpu_sgd_step");
}

void gpu_adamw_step(float*, const float*, float*, float*, size_t, float, float, float, float, float,
                    float, float, GpuStream) {
  no_cuda("gpu_adamw_step");
}

}  // namespace evenfeed
