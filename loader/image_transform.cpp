#include "loader/image_transform.h"

#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include <algorithm>
#include <cmath>

namespace evenfeed {
namespace {

void store_uint8(const uint8_t* rgbx, int size, bool flip, uint8_t* out) {
  for (int y = 0; y < size; ++y) {
    const uint8_t* row = rgbx + static_cast<size_t>(y) * size * 4;
    uint8_t* dst = out + static_cast<size_t>(y) * size * 3;
    for (int x = 0; x < size; ++x) {
      const uint8_t* p = row + 4 * (flip ? size - 1 - x : x);
      dst[3 * x] = p[0];
      dst[3 * x + 1] = p[1];
      dst[3 * x + 2] = p[2];
    }
  }
}

void store_float(const uint8_t* rgbx, int size, bool flip, const ImageOutput& o, float* out) {
  const size_t plane = static_cast<size_t>(size) * size;
  for (int c = 0; c < 3; ++c) {
    const float scale = 1.0f / (255.0f * o.std[c]), shift = -o.mean[c] / o.std[c];
    float* dst = out + c * plane;
    for (int y = 0; y < size; ++y) {
      const uint8_t* row = rgbx + static_cast<size_t>(y) * size * 4;
      for (int x = 0; x < size; ++x) {
        dst[static_cast<size_t>(y) * size + x] =
            row[4 * (flip ? size - 1 - x : x) + c] * scale + shift;
      }
    }
  }
}

}  // namespace

void resize_and_store(const DecodedRegion& region, bool flip, const ImageOutput& output,
                      std::vector<uint8_t>& scratch, void* destination) {
  const int size = output.size;
  scratch.resize(static_cast<size_t>(size) * size * 4);
  // The crop rounded to whole region pixels (at most half a pixel of the scaled image).
  const int x = std::clamp(static_cast<int>(std::lround(region.x)), 0, region.width - 1);
  const int y = std::clamp(static_cast<int>(std::lround(region.y)), 0, region.height - 1);
  const int w = std::clamp(static_cast<int>(std::lround(region.crop_width)), 1, region.width - x);
  const int h = std::clamp(static_cast<int>(std::lround(region.crop_height)), 1, region.height - y);
  const uint8_t* source =
      region.pixels + static_cast<size_t>(y) * region.stride + static_cast<size_t>(x) * 4;
  // libyuv treats the four bytes of RGBX as ARGB; scaling is channel-agnostic.
  libyuv::ARGBScale(source, static_cast<int>(region.stride), w, h, scratch.data(), size * 4, size,
                    size, libyuv::kFilterBox);
  if (output.layout == ImageLayout::kUint8NHWC) {
    store_uint8(scratch.data(), size, flip, static_cast<uint8_t*>(destination));
  } else {
    store_float(scratch.data(), size, flip, output, static_cast<float*>(destination));
  }
}

}  // namespace evenfeed
