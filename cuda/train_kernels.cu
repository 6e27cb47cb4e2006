// The trainer's kernels (cuda/train_kernels.h). Each is the GPU twin of a CPU loop
// and says which; arithmetic that must agree with the CPU to the last bit uses the
// _rn intrinsics, which nvcc never fuses into multiply-adds (the CPU build has no FMA).
#include "cuda/cuda_check.h"
#include "cuda/train_kernels.h"

namespace evenfeed {
namespace {

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

// Bits of the per-row flags the cross-entropy kernel writes.
constexpr int32_t kCounted = 1, kCorrect = 2, kBadLabel = 4;

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
  if (j >= n) return;
  float sum = out[j];
  for (size_t r = 0; r < rows; ++r) sum = __fadd_rn(sum, x[r * n + j]);
  out[j] = sum;
}

// One thread per row: the class counts are small (tens), and the CPU reference's
// double-precision sums are kept, so loss and delta agree with it closely.
__global__ void softmax_cross_entropy_kernel(const float* logits, const int32_t* labels,
                                             const uint8_t* valid, size_t rows, int classes,
                                             float* delta, double* row_loss, int32_t* row_flags) {
  const size_t r = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const float* z = logits + r * classes;
  float* d = delta + r * classes;
  for (int c = 0; c < classes; ++c) d[c] = 0.0f;
  row_loss[r] = 0;
  row_flags[r] = 0;
  if (valid != nullptr && valid[r] == 0) return;
  const int label = labels[r];
  if (label < 0 || label >= classes) {
    row_flags[r] = kBadLabel;
    return;
  }
  float top = z[0];
  int argmax = 0;
  for (int c = 1; c < classes; ++c)
    if (z[c] > top) top = z[c], argmax = c;
  double total = 0;
  for (int c = 0; c < classes; ++c) total += exp(static_cast<double>(z[c] - top));
  const double log_total = log(total);
  row_loss[r] = log_total - (z[label] - top);
  row_flags[r] = kCounted | (argmax == label ? kCorrect : 0);
  for (int c = 0; c < classes; ++c)
    d[c] = static_cast<float>(exp(static_cast<double>(z[c] - top) - log_total));
  d[label] -= 1.0f;
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
    samples[t] += (row_flags[r] & kCounted) != 0;
    correct[t] += (row_flags[r] & kCorrect) != 0;
    bad[t] += (row_flags[r] & kBadLabel) != 0;
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
  const bool real_row = valid == nullptr || valid[r] != 0;
  uint32_t real = 0;
  for (uint32_t t = 0; t < max_length; ++t) {
    const size_t cell = r * max_length + t;
    if (mask[cell] == 0) continue;
    const int32_t token = tokens[cell];
    if (token < 0 || static_cast<uint32_t>(token) >= vocab) {
      if (threadIdx.x == 0) atomicAdd(bad_tokens, 1ull);
      continue;
    }
    ++real;
  }
  const float scale = (real == 0 || !real_row) ? 0.0f : 1.0f / static_cast<float>(real);
  if (threadIdx.x == 0) inverse_length[r] = scale;
  for (int d = threadIdx.x; d < dim; d += blockDim.x) {
    float sum = 0;
    for (uint32_t t = 0; t < max_length && scale != 0.0f; ++t) {
      const size_t cell = r * max_length + t;
      const int32_t token = tokens[cell];
      if (mask[cell] == 0 || token < 0 || static_cast<uint32_t>(token) >= vocab) continue;
      sum = __fadd_rn(sum, table[static_cast<size_t>(token) * dim + d]);
    }
    pooled[r * dim + d] = __fmul_rn(sum, scale);
  }
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
    if (mask[cell] == 0 || token < 0 || static_cast<uint32_t>(token) >= vocab) continue;
    for (int d = threadIdx.x; d < dim; d += blockDim.x)
      atomicAdd(table_grad + static_cast<size_t>(token) * dim + d,
                __fmul_rn(pooled_grad[r * dim + d], scale));
  }
}

__global__ void scale_kernel(float* x, size_t count, float factor) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = __fmul_rn(x[i], factor);
}

__global__ void sgd_kernel(float* params, const float* grads, float* velocity, size_t count,
                           float lr, float momentum, float decay) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const float v =
      __fadd_rn(__fadd_rn(__fmul_rn(momentum, velocity[i]), grads[i]), __fmul_rn(decay, params[i]));
  velocity[i] = v;
  params[i] = __fsub_rn(params[i], __fmul_rn(lr, v));
}

__global__ void adamw_kernel(float* params, const float* grads, float* m, float* v, size_t count,
                             float lr, float b1, float b2, float c1, float c2, float eps,
                             float decay) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const float g = grads[i];
  const float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(__fsub_rn(1.0f, b1), g));
  const float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(__fsub_rn(1.0f, b2), g), g));
  m[i] = mi;
  v[i] = vi;
  const float update = __fdiv_rn(__fdiv_rn(mi, c1), __fadd_rn(__fsqrt_rn(__fdiv_rn(vi, c2)), eps));
  params[i] = __fsub_rn(params[i], __fmul_rn(lr, __fadd_rn(update, __fmul_rn(decay, params[i]))));
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
