// The GPU kernels of the trainer's models and optimisers, behind a header with no CUDA
// types. Each mirrors a loop of the CPU reference (trainer/mlp_stack.cpp,
// trainer/models.cpp, trainer/optimizer.cpp) and is queued on `stream`; all pointers
// are device memory. tests/cuda/train_kernels_test.cpp compares each with its CPU
// twin. In a build without CUDA every call throws Error.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/gpu_runtime.h"

namespace evenfeed {

// out[r * n + j] = row[j] for r < rows (the bias, before the product adds in).
void gpu_broadcast_rows(float* out, const float* row, size_t rows, int n, GpuStream stream);
// x = max(x, 0).
void gpu_relu(float* x, size_t count, GpuStream stream);
// delta = 0 where the ReLU's output `activation` is not positive.
void gpu_relu_backward(float* delta, const float* activation, size_t count, GpuStream stream);
// out[j] += sum over r of x[r * n + j] (bias gradients), in row order.
void gpu_add_column_sums(const float* x, size_t rows, int n, float* out, GpuStream stream);

// Softmax cross-entropy over `rows` logit rows, as MlpStack::forward computes it:
// delta = d(sum of losses)/d(logits), zero on rows whose `valid` byte is 0 (valid may
// be nullptr: all rows real). Per-row results go to `row_loss` and `row_flags`
// (rows entries each); gpu_sum_loss reduces them, in a fixed order, into `totals`.
void gpu_softmax_cross_entropy(const float* logits, const int32_t* labels, const uint8_t* valid,
                               size_t rows, int classes, float* delta, double* row_loss,
                               int32_t* row_flags, GpuStream stream);
// The device-side totals of one forward pass; copy them back with gpu_copy_to_host.
struct GpuLossTotals {
  double loss = 0;
  uint64_t samples = 0, correct = 0;
  uint64_t bad_labels = 0;  // rows whose label is outside [0, classes)
};
// Adds the per-row results into `totals` (device memory, one GpuLossTotals).
void gpu_sum_loss(const double* row_loss, const int32_t* row_flags, size_t rows,
                  GpuLossTotals* totals, GpuStream stream);

// Token classifier: pooled[r] = mean of the embeddings of row r's real tokens (mask
// bytes non-zero), zero for padding rows and rows without tokens; inverse_length[r]
// = 1 / that count (0 for those rows). Token ids outside [0, vocab) count into
// `bad_tokens` (one device uint64) and are skipped.
void gpu_embedding_mean(const float* table, uint32_t vocab, int dim, const int32_t* tokens,
                        const uint8_t* mask, const uint8_t* valid, size_t rows, uint32_t max_length,
                        float* pooled, float* inverse_length, uint64_t* bad_tokens,
                        GpuStream stream);
// table_grad[token] += pooled_grad[r] * inverse_length[r] for every real token of row
// r. Atomic adds: the order of the sums, and so their last bits, may vary.
void gpu_embedding_mean_backward(const float* pooled_grad, const float* inverse_length, int dim,
                                 const int32_t* tokens, const uint8_t* mask, size_t rows,
                                 uint32_t max_length, uint32_t vocab, float* table_grad,
                                 GpuStream stream);

// x *= factor.
void gpu_scale(float* x, size_t count, float factor, GpuStream stream);
// SGD with momentum and L2 decay (Optimizer::step's first branch).
void gpu_sgd_step(float* params, const float* grads, float* velocity, size_t count, float lr,
                  float momentum, float decay, GpuStream stream);
// AdamW with bias corrections c1 = 1 - beta1^t, c2 = 1 - beta2^t and decoupled decay.
void gpu_adamw_step(float* params, const float* grads, float* m, float* v, size_t count, float lr,
                    float beta1, float beta2, float correction1, float correction2, float epsilon,
                    float decay, GpuStream stream);

}  // namespace evenfeed
