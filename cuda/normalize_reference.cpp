#include <cmath>

#include "core/bfloat16.h"
#include "core/error.h"
#include "cuda/normalize.h"

namespace evenfeed {

NormalizeCoefficients normalize_coefficients(const NormalizeParams& params) {
  NormalizeCoefficients k;
  for (int c = 0; c < 3; ++c) {
    EVENFEED_CHECK(params.std[c] > 0, "normalisation std of channel {} must be positive, got {}", c,
                   params.std[c]);
    k.scale[c] = 1.0f / (255.0f * params.std[c]);
    k.bias[c] = -params.mean[c] / params.std[c];
  }
  return k;
}

void normalize_reference(const uint8_t* nhwc, const ImageBatchShape& shape, const uint8_t* flip,
                         const NormalizeParams& params, DataType out_type, void* out) {
  const NormalizeCoefficients k = normalize_coefficients(params);
  const size_t h = static_cast<size_t>(shape.height), w = static_cast<size_t>(shape.width);
  const size_t plane = h * w;
  for (size_t n = 0; n < shape.count; ++n) {
    const bool mirrored = flip != nullptr && flip[n] != 0;
    const uint8_t* image = nhwc + n * plane * 3;
    for (size_t c = 0; c < 3; ++c) {
      const size_t out_base = (n * 3 + c) * plane;
      for (size_t y = 0; y < h; ++y) {
        for (size_t x = 0; x < w; ++x) {
          const size_t source_x = mirrored ? w - 1 - x : x;
          const float value = std::fma(static_cast<float>(image[(y * w + source_x) * 3 + c]),
                                       k.scale[c], k.bias[c]);
          if (out_type == DataType::kFloat32) {
            static_cast<float*>(out)[out_base + y * w + x] = value;
          } else {
            static_cast<uint16_t*>(out)[out_base + y * w + x] = float_to_bfloat16(value);
          }
        }
      }
    }
  }
}

}  // namespace evenfeed
