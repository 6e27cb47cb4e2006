// The trainer's kernels (cuda/train_kernels.h): launch shapes around the per-thread
// arithmetic of cuda/train_kernel_math.h, which the host tests run too. What is here
// alone (the loss reduction in shared memory, the atomics) the GPU tests cover.
#include "cuda/cuda_check.h"
#include "cuda/train_kernel_math.h"
#include "cuda/train_kernels.h"

namespace evenfeed {
namespace {

namespace km = kernel_math;
constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  return static_cast<unsigned>((count + kThreads - 1) / kThreads);
}

cudaStream_t cuda_stream(GpuStream stream) {
  return static_cast<cudaStream_t>(stream);
}

void check_launch() {
  CUDA_CHECK(cudaGetLastError());
}

__global__ void broadcast_rows_kernel(float* out, const float* row, size_t total, int n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < total) out[i] = row[i % n];
}

__global__ void relu_kernel(float* x, size_t count) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = fmaxf(x[i], 0.0f);
}

__global__ void relu_backward_kernel(float* delta, const float* activation, size_t count) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count && activation[i] <= 0.0f) delta[i] = 0.0f;
}

// One thread per column, summing down the rows in order (as the CPU loop does), so
// neighbouring threads read neighbouring addresses.
__global__ void column_sums_kernel(const float* x, size_t rows, int n, float* out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) km::add_column_sum(j, x, rows, n, out);
}

// One thread per row: the class counts are small (tens), and the CPU reference's
// double-precision sums are kept, so loss and delta agree with it closely.
__global__ void softmax_cross_entropy_kernel(const float* logits, const int32_t* labels,
                                             const uint8_t* valid, size_t rows, int classes,
                                             float* delta, double* row_loss, int32_t* row_flags) {
  const size_t r = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (r < rows)
    km::softmax_cross_entropy_row(r, logits, labels, valid, classes, delta, row_loss, row_flags);
}

// One block: each thread sums a fixed stride of rows, then a tree in shared memory.
// The order of the additions depends only on `rows`, so the sum is reproducible.
__global__ void sum_loss_kernel(const double* row_loss, const int32_t* row_flags, size_t rows,
                                GpuLossTotals* totals) {
  __shared__ double loss[kThreads];
  __shared__ unsigned long long samples[kThreads], correct[kThreads], bad[kThreads];
  const int t = threadIdx.x;
  loss[t] = 0, samples[t] = correct[t] = bad[t] = 0;
  for (size_t r = t; r < rows; r += kThreads) {
    loss[t] += row_loss[r];
    samples[t] += (row_flags[r] & km::kCounted) != 0;
    correct[t] += (row_flags[r] & km::kCorrect) != 0;
    bad[t] += (row_flags[r] & km::kBadLabel) != 0;
  }
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      loss[t] += loss[t + half];
      samples[t] += samples[t + half];
      correct[t] += correct[t + half];
      bad[t] += bad[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    totals->loss += loss[0];
    totals->samples += samples[0];
    totals->correct += correct[0];
    totals->bad_labels += bad[0];
  }
}

// One block per row, threads across the embedding width.
__global__ void embedding_mean_kernel(const float* table, uint32_t vocab, int dim,
                                      const int32_t* tokens, const uint8_t* mask,
                                      const uint8_t* valid, uint32_t max_length, float* pooled,
                                      float* inverse_length, unsigned long long* bad_tokens) {
  const size_t r = blockIdx.x;
  uint32_t bad = 0;
  const float scale = km::embedding_row_scale(r, tokens, mask, valid, max_length, vocab, &bad);
  if (threadIdx.x == 0) {
    inverse_length[r] = scale;
    if (bad > 0) atomicAdd(bad_tokens, static_cast<unsigned long long>(bad));
  }
  for (int d = threadIdx.x; d < dim; d += blockDim.x)
    pooled[r * dim + d] =
        km::embedding_mean_cell(r, d, table, dim, tokens, mask, max_length, vocab, scale);
}

__global__ void embedding_mean_backward_kernel(const float* pooled_grad,
                                               const float* inverse_length, int dim,
                                               const int32_t* tokens, const uint8_t* mask,
                                               uint32_t max_length, uint32_t vocab,
                                               float* table_grad) {
  const size_t r = blockIdx.x;
  const float scale = inverse_length[r];
  if (scale == 0.0f) return;
  for (uint32_t t = 0; t < max_length; ++t) {
    const size_t cell = r * max_length + t;
    const int32_t token = tokens[cell];
    if (mask[cell] == 0 || !km::token_in_vocab(token, vocab)) continue;
    for (int d = threadIdx.x; d < dim; d += blockDim.x)
      atomicAdd(table_grad + static_cast<size_t>(token) * dim + d,
                km::mul_rn(pooled_grad[r * dim + d], scale));
  }
}

__global__ void scale_kernel(float* x, size_t count, float factor) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = km::mul_rn(x[i], factor);
}

__global__ void sgd_kernel(float* params, const float* grads, float* velocity, size_t count,
                           float lr, float momentum, float decay) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) km::sgd_element(i, params, grads, velocity, lr, momentum, decay);
}

__global__ void adamw_kernel(float* params, const float* grads, float* m, float* v, size_t count,
                             float lr, float b1, float b2, float c1, float c2, float eps,
                             float decay) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) km::adamw_element(i, params, grads, m, v, lr, b1, b2, c1, c2, eps, decay);
}

}  // namespace

void gpu_broadcast_rows(float* out, const float* row, size_t rows, int n, GpuStream stream) {
  const size_t total = rows * static_cast<size_t>(n);
  if (total == 0) return;
  broadcast_rows_kernel<<<blocks_for(total), kThreads, 0, cuda_stream(stream)>>>(out, row, total,
                                                                                 n);
  check_launch();
}

void gpu_relu(float* x, size_t count, GpuStream stream) {
  if (count == 0) return;
  relu_kernel<<<blocks_for(count), kThreads, 0, cuda_stream(stream)>>>(x, count);
  check_launch();
}

void gpu_relu_backward(float* delta, const float* activation, size_t count, GpuStream stream) {
  if (count == 0) return;
  relu_backward_kernel<<<blocks_for(count), kThreads, 0, cuda_stream(stream)>>>(delta, activation,
                                                                                count);
  check_launch();
}

void gpu_add_column_sums(const float* x, size_t rows, int n, float* out, GpuStream stream) {
  if (n == 0) return;
  column_sums_kernel<<<blocks_for(static_cast<size_t>(n)), kThreads, 0, cuda_stream(stream)>>>(
      x, rows, n, out);
  check_launch();
}

void gpu_softmax_cross_entropy(const float* logits, const int32_t* labels, const uint8_t* valid,
                               size_t rows, int classes, float* delta, double* row_loss,
                               int32_t* row_flags, GpuStream stream) {
  if (rows == 0) return;
  softmax_cross_entropy_kernel<<<blocks_for(rows), kThreads, 0, cuda_stream(stream)>>>(
      logits, labels, valid, rows, classes, delta, row_loss, row_flags);
  check_launch();
}

void gpu_sum_loss(const double* row_loss, const int32_t* row_flags, size_t rows,
                  GpuLossTotals* totals, GpuStream stream) {
  sum_loss_kernel<<<1, kThreads, 0, cuda_stream(stream)>>>(row_loss, row_flags, rows, totals);
  check_launch();
}

void gpu_embedding_mean(const float* table, uint32_t vocab, int dim, const int32_t* tokens,
                        const uint8_t* mask, const uint8_t* valid, size_t rows, uint32_t max_length,
                        float* pooled, float* inverse_length, uint64_t* bad_tokens,
                        GpuStream stream) {
  if (rows == 0) return;
  const int threads = dim < kThreads ? ((dim + 31) / 32) * 32 : kThreads;
  embedding_mean_kernel<<<static_cast<unsigned>(rows), threads, 0, cuda_stream(stream)>>>(
      table, vocab, dim, tokens, mask, valid, max_length, pooled, inverse_length,
      reinterpret_cast<unsigned long long*>(bad_tokens));
  check_launch();
}

void gpu_embedding_mean_backward(const float* pooled_grad, const float* inverse_length, int dim,
                                 const int32_t* tokens, const uint8_t* mask, size_t rows,
                                 uint32_t max_length, uint32_t vocab, float* table_grad,
                                 GpuStream stream) {
  if (rows == 0) return;
  const int threads = dim < kThreads ? ((dim + 31) / 32) * 32 : kThreads;
  embedding_mean_backward_kernel<<<static_cast<unsigned>(rows), threads, 0, cuda_stream(stream)>>>(
      pooled_grad, inverse_length, dim, tokens, mask, max_length, vocab, table_grad);
  check_launch();
}

void gpu_scale(float* x, size_t count, float factor, GpuStream stream) {
  if (count == 0) return;
  scale_kernel<<<blocks_for(count), kThreads, 0, cuda_stream(stream)>>>(x, count, factor);
  check_launch();
}

void gpu_sgd_step(float* params, const float* grads, float* velocity, size_t count, float lr,
                  float momentum, float decay, GpuStream stream) {
  if (count == 0) return;
  sgd_kernel<<<blocks_for(count), kThreads, 0, cuda_stream(stream)>>>(params, grads, velocity,
                                                                      count, lr, momentum, decay);
  check_launch();
}

void gpu_adamw_step(float* params, const float* grads, float* m, float* v, size_t count, float lr,
                    float beta1, float beta2, float correction1, float correction2, float epsilon,
                    float decay, GpuStream stream) {
  if (count == 0) return;
  adamw_kernel<<<blocks_for(count), kThreads, 0, cuda_stream(stream)>>>(
      params, grads, m, v, count, lr, beta1, beta2, correction1, correction2, epsilon, decay);
  check_launch();
}

}  // namespace evenfeed
