// The arithmetic of the trainer's kernels, one thread's share each, as functions that
// compile both for the GPU (nvcc, __host__ __device__) and for the host (any C++
// compiler). cuda/train_kernels.cu launches them; tests/trainer/train_kernel_math_test
// runs the very same functions on the CPU against the CPU reference (MlpStack,
// Optimizer, the token classifier's pooling), so their indexing and arithmetic are
// tested on every build, GPU or not. What only a GPU can test (launch shapes, shared
// memory reductions, atomics, streams) stays in the .cu file and in the GPU tests.
//
// Rounding: the *_rn helpers are the device's round-to-nearest intrinsics, which nvcc
// never fuses into multiply-adds; on the host they are plain operators (the x86-64
// baseline has no FMA to fuse into). So both sides compute the same bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define EVENFEED_HOST_DEVICE __host__ __device__
#else
#define EVENFEED_HOST_DEVICE
#endif

namespace evenfeed::kernel_math {

EVENFEED_HOST_DEVICE inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
EVENFEED_HOST_DEVICE inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
EVENFEED_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
EVENFEED_HOST_DEVICE inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
EVENFEED_HOST_DEVICE inline float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// Bits of the per-row flags the cross-entropy writes.
constexpr int32_t kCounted = 1, kCorrect = 2, kBadLabel = 4;

// Row r of the softmax cross-entropy, as MlpStack::forward computes it: the loss in
// double, delta = softmax - one-hot (zero on padding rows and bad labels).
EVENFEED_HOST_DEVICE inline void softmax_cross_entropy_row(size_t r, const float* logits,
                                                           const int32_t* labels,
                                                           const uint8_t* valid, int classes,
                                                           float* delta, double* row_loss,
                                                           int32_t* row_flags) {
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
  int argmax = 0;  // the first maximum, as std::max_element
  for (int c = 1; c < classes; ++c) {
    if (z[c] > top) {
      top = z[c];
      argmax = c;
    }
  }
  double total = 0;
  for (int c = 0; c < classes; ++c) total += exp(static_cast<double>(z[c] - top));
  const double log_total = log(total);
  row_loss[r] = log_total - (z[label] - top);
  row_flags[r] = kCounted | (argmax == label ? kCorrect : 0);
  for (int c = 0; c < classes; ++c)
    d[c] = static_cast<float>(exp(static_cast<double>(z[c] - top) - log_total));
  d[label] -= 1.0f;
}

// out[j] += sum over rows of x[r * n + j], adding in row order (the CPU loop's order).
EVENFEED_HOST_DEVICE inline void add_column_sum(int j, const float* x, size_t rows, int n,
                                                float* out) {
  float sum = out[j];
  for (size_t r = 0; r < rows; ++r) sum = add_rn(sum, x[r * n + j]);
  out[j] = sum;
}

// Optimizer::step's SGD line for element i.
EVENFEED_HOST_DEVICE inline void sgd_element(size_t i, float* params, const float* grads,
                                             float* velocity, float lr, float momentum,
                                             float decay) {
  const float v = add_rn(add_rn(mul_rn(momentum, velocity[i]), grads[i]), mul_rn(decay, params[i]));
  velocity[i] = v;
  params[i] = sub_rn(params[i], mul_rn(lr, v));
}

// Optimizer::step's AdamW lines for element i; c1, c2 are the bias corrections.
EVENFEED_HOST_DEVICE inline void adamw_element(size_t i, float* params, const float* grads,
                                               float* m, float* v, float lr, float b1, float b2,
                                               float c1, float c2, float eps, float decay) {
  const float g = grads[i];
  const float mi = add_rn(mul_rn(b1, m[i]), mul_rn(sub_rn(1.0f, b1), g));
  const float vi = add_rn(mul_rn(b2, v[i]), mul_rn(mul_rn(sub_rn(1.0f, b2), g), g));
  m[i] = mi;
  v[i] = vi;
  const float update = div_rn(div_rn(mi, c1), add_rn(sqrt_rn(div_rn(vi, c2)), eps));
  params[i] = sub_rn(params[i], mul_rn(lr, add_rn(update, mul_rn(decay, params[i]))));
}

EVENFEED_HOST_DEVICE inline bool token_in_vocab(int32_t token, uint32_t vocab) {
  return token >= 0 && static_cast<uint32_t>(token) < vocab;
}

// 1 / (real tokens of row r) for a real row with tokens, else 0 (padding rows and
// empty rows pool to zero and pass no gradient). Tokens outside the vocabulary do not
// count; `bad` receives how many there were.
EVENFEED_HOST_DEVICE inline float embedding_row_scale(size_t r, const int32_t* tokens,
                                                      const uint8_t* mask, const uint8_t* valid,
                                                      uint32_t max_length, uint32_t vocab,
                                                      uint32_t* bad) {
  uint32_t real = 0, outside = 0;
  for (uint32_t t = 0; t < max_length; ++t) {
    const size_t cell = r * max_length + t;
    if (mask[cell] == 0) continue;
    if (token_in_vocab(tokens[cell], vocab)) {
      ++real;
    } else {
      ++outside;
    }
  }
  *bad = outside;
  const bool real_row = valid == nullptr || valid[r] != 0;
  return (real == 0 || !real_row) ? 0.0f : 1.0f / static_cast<float>(real);
}

// pooled[r][d]: the embeddings' column d summed over row r's real tokens in order,
// times the row's scale (the CPU pooling's arithmetic).
EVENFEED_HOST_DEVICE inline float embedding_mean_cell(size_t r, int d, const float* table, int dim,
                                                      const int32_t* tokens, const uint8_t* mask,
                                                      uint32_t max_length, uint32_t vocab,
                                                      float scale) {
  if (scale == 0.0f) return 0.0f;
  float sum = 0;
  for (uint32_t t = 0; t < max_length; ++t) {
    const size_t cell = r * max_length + t;
    if (mask[cell] == 0 || !token_in_vocab(tokens[cell], vocab)) continue;
    sum = add_rn(sum, table[static_cast<size_t>(tokens[cell]) * dim + d]);
  }
  return mul_rn(sum, scale);
}

}  // namespace evenfeed::kernel_math
