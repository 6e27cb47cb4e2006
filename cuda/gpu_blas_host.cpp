// The host-only build's GpuBlas (nvcc not found at configure time).
#include "core/error.h"
#include "cuda/gpu_blas.h"

namespace evenfeed {

GpuBlas::GpuBlas(GpuStream) {
  fail(
      "the GPU model needs cuBLAS, but evenfeed was built without CUDA (nvcc not found); "
      "train with --device cpu");
}

GpuBlas::~GpuBlas() {
  (void)handle_;  // never set without CUDA
}

void GpuBlas::sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float,
                    float*, int) {}

}  // namespace evenfeed
