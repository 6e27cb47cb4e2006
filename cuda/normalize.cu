#include <cuda_bf16.h>

#include "cuda/cuda_check.h"
#include "cuda/normalize.h"

namespace evenfeed {
namespace {

// Plain arrays: std::array's operator[] is host-only in device code.
struct KernelCoefficients {
  float scale[3], bias[3];
};

// One thread per output element, consecutive threads on consecutive output x, so the
// writes coalesce; the reads stride by 3 bytes, which the L1 absorbs.
template <typename Out>
__global__ void normalize_kernel(const uint8_t* __restrict__ nhwc, size_t total, int height,
                                 int width, const uint8_t* __restrict__ flip, KernelCoefficients k,
                                 Out* __restrict__ out) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const size_t plane = static_cast<size_t>(height) * width;
  const size_t x = i % width, y = (i / width) % height;
  const int c = static_cast<int>((i / plane) % 3);
  const size_t n = i / (plane * 3);
  const size_t source_x = (flip != nullptr && flip[n] != 0) ? width - 1 - x : x;
  const float value = fmaf(static_cast<float>(nhwc[((n * height + y) * width + source_x) * 3 + c]),
                           k.scale[c], k.bias[c]);
  if constexpr (sizeof(Out) == 4) {
    out[i] = value;
  } else {
    out[i] = __float2bfloat16_rn(value);
  }
}

}  // namespace

void normalize_on_gpu(const uint8_t* nhwc, const ImageBatchShape& shape, const uint8_t* flip,
                      const NormalizeParams& params, DataType out_type, void* out,
                      GpuStream stream) {
  const NormalizeCoefficients host = normalize_coefficients(params);
  KernelCoefficients k{};
  for (int c = 0; c < 3; ++c) {
    k.scale[c] = host.scale[c];
    k.bias[c] = host.bias[c];
  }
  const size_t total = shape.count * 3 * static_cast<size_t>(shape.height) * shape.width;
  if (total == 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((total + kThreads - 1) / kThreads);
  auto s = static_cast<cudaStream_t>(stream);
  if (out_type == DataType::kFloat32) {
    normalize_kernel<<<blocks, kThreads, 0, s>>>(nhwc, total, shape.height, shape.width, flip, k,
                                                 static_cast<float*>(out));
  } else {
    normalize_kernel<<<blocks, kThreads, 0, s>>>(nhwc, total, shape.height, shape.width, flip, k,
                                                 static_cast<__nv_bfloat16*>(out));
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace evenfeed
