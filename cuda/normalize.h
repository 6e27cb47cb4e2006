// Batch normalisation of images for the model's input: uint8 NHWC (what the loader
// collates, 4x fewer bytes over PCIe) to float32 or bfloat16 NCHW, per channel
//   out = (x / 255 - mean[c]) / std[c],
// with an optional horizontal flip per sample. normalize_reference() is the plain CPU
// version; normalize_on_gpu() must match it (the GPU test compares them), and the
// CPU trainer uses the reference directly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/data_type.h"
#include "cuda/gpu_runtime.h"

namespace evenfeed {

struct NormalizeParams {
  // In units of x / 255. Defaults: the ImageNet statistics torchvision uses.
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

struct ImageBatchShape {
  size_t count = 0;  // images
  int height = 0, width = 0;
};

// Per channel: out = x * scale[c] + bias[c], the exact arithmetic both versions use
// (one fused multiply-add per element), so they agree to the last bit.
struct NormalizeCoefficients {
  std::array<float, 3> scale{}, bias{};
};
NormalizeCoefficients normalize_coefficients(const NormalizeParams& params);

// `flip`: one byte per image (non-zero: mirror it left-right), or nullptr for none.
// `out`: float (kFloat32) or uint16_t bfloat16 bits (kBFloat16), count x 3 x H x W.
void normalize_reference(const uint8_t* nhwc, const ImageBatchShape& shape, const uint8_t* flip,
                         const NormalizeParams& params, DataType out_type, void* out);

// The same on device memory, queued on `stream`. Throws Error when no GPU is visible.
void normalize_on_gpu(const uint8_t* nhwc, const ImageBatchShape& shape, const uint8_t* flip,
                      const NormalizeParams& params, DataType out_type, void* out,
                      GpuStream stream);

}  // namespace evenfeed
