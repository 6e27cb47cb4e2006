// Matrix products on the GPU through cuBLAS, behind a header with no CUDA types.
//
// cuBLAS is loaded with dlopen on first use, not linked: libcublas pulls in
// libcublasLt (over 500 MB), and merely loading the pair costs every process about
// 150 ms at start-up (measured here: 20 starts of a two-line program, 3.07 s against
// 0.03 s). Every evenfeed binary and test would pay that, GPU or not. Only the four
// calls below are resolved; the library's major version is the toolkit's we built
// with (libcublas.so.<CUBLAS_VER_MAJOR>).
#pragma once

#include "cuda/gpu_runtime.h"

namespace evenfeed {

class GpuBlas {
 public:
  // A cuBLAS handle whose work is queued on `stream`. Throws Error when no GPU is
  // visible or cuBLAS cannot be loaded (the message names the library it looked for).
  explicit GpuBlas(GpuStream stream);
  ~GpuBlas();
  GpuBlas(const GpuBlas&) = delete;
  GpuBlas& operator=(const GpuBlas&) = delete;

  // Row-major C (m x n) = alpha * op(A) * op(B) + beta * C with op(X) = X or X^T, and
  // leading dimensions as cblas_sgemm(CblasRowMajor, ...) takes them, so the CPU
  // reference and the GPU path read the same. All pointers are device memory.
  void sgemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
             int lda, const float* b, int ldb, float beta, float* c, int ldc);

 private:
  void* handle_ = nullptr;  // cublasHandle_t
};

}  // namespace evenfeed
