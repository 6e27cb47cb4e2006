#include "cuda/gpu_blas.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

#include "core/error.h"

namespace evenfeed {
namespace {

// The cuBLAS entry points evenfeed uses, resolved once from the shared library.
struct CublasCalls {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

template <typename Function>
void resolve(void* library, const char* name, Function& target) {
  target = reinterpret_cast<Function>(dlsym(library, name));
  EVENFEED_CHECK(target != nullptr, "cuBLAS has no {} ({}); install the CUDA {} toolkit's cuBLAS",
                 name, dlerror(), CUBLAS_VER_MAJOR);
}

const CublasCalls& cublas() {
  static const CublasCalls calls = [] {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    EVENFEED_CHECK(library != nullptr,
                   "cannot load {} for the GPU model ({}); put CUDA's lib64 folder (or the "
                   "nvidia-cublas wheel's lib folder) on LD_LIBRARY_PATH, or train with "
                   "--device cpu",
                   name, dlerror());
    CublasCalls c;
    resolve(library, "cublasCreate_v2", c.create);
    resolve(library, "cublasDestroy_v2", c.destroy);
    resolve(library, "cublasSetStream_v2", c.set_stream);
    resolve(library, "cublasSgemm_v2", c.sgemm);
    resolve(library, "cublasGetStatusString", c.status_string);
    return c;  // the library stays loaded for the life of the process
  }();
  return calls;
}

#define CUBLAS_CHECK(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t cublas_rc_ = (call);                                                           \
    if (cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::evenfeed::fail("cuBLAS {} failed: {} ({}:{})", #call, cublas().status_string(cublas_rc_), \
                       __FILE__, __LINE__);                                                       \
  } while (0)

cublasOperation_t operation(bool transpose) {
  return transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}

}  // namespace

GpuBlas::GpuBlas(GpuStream stream) {
  EVENFEED_CHECK(gpu_visible(), "the GPU model needs a GPU, and none is visible");
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublas().create(&handle));
  handle_ = handle;
  CUBLAS_CHECK(cublas().set_stream(handle, static_cast<cudaStream_t>(stream)));
}

GpuBlas::~GpuBlas() {
  if (handle_ != nullptr) cublas().destroy(static_cast<cublasHandle_t>(handle_));
}

// cuBLAS is column-major. A row-major matrix is the column-major view of its
// transpose, so row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
// the same call with the operands swapped and m, n exchanged.
void GpuBlas::sgemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                    const float* a, int lda, const float* b, int ldb, float beta, float* c,
                    int ldc) {
  if (m == 0 || n == 0) return;
  CUBLAS_CHECK(cublas().sgemm(static_cast<cublasHandle_t>(handle_), operation(transpose_b),
                              operation(transpose_a), n, m, k, &alpha, b, ldb, a, lda, &beta, c,
                              ldc));
}

}  // namespace evenfeed
