// The host-only build's normalize_on_gpu (nvcc not found at configure time).
#include "core/error.h"
#include "cuda/normalize.h"

namespace evenfeed {

void normalize_on_gpu(const uint8_t*, const ImageBatchShape&, const uint8_t*,
                      const NormalizeParams&, DataType, void*, GpuStream) {
  fail(
      "normalize_on_gpu needs a GPU, but evenfeed was built without CUDA (nvcc not found); "
      "use normalize_reference on the host");
}

}  // namespace evenfeed
