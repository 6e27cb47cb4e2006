#include "loader/image_transform.h"

#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>

#include <algorithm>
#include <cmath>

namespace evenfeed {
namespace {

// Drops the fourth byte of each pixel with libyuv's SIMD rows. libyuv's ARGB is B, G, R,
// A in memory and its RGB24 the first three of those bytes, so RGBX comes out as RGB.
void store_uint8(const uint8_t* rgbx, int size, uint8_t* out) {
  libyuv::ARGBToRGB24(rgbx, size * 4, out, size * 3, size, size);
}

void store_float(const uint8_t* rgbx, int size, const ImageOutput& o, float* out) {
  const size_t plane = static_cast<size_t>(size) * size;
  for (int c = 0; c < 3; ++c) {
    const float scale = 1.0f / (255.0f * o.std[c]), shift = -o.mean[c] / o.std[c];
    float* dst = out + c * plane;
    for (int y = 0; y < size; ++y) {
      const uint8_t* row = rgbx + static_cast<size_t>(y) * size * 4;
      for (int x = 0; x < size; ++x) {
        dst[static_cast<size_t>(y) * size + x] = static_cast<float>(row[4 * x + c]) * scale + shift;
      }
    }
  }
}

// The libyuv we link (Debian's 2023-01 snapshot, built with its asserts) takes its
// 1/4 box path for any exact 4x width reduction whose height step is an even integer,
// and that path asserts the height step is a multiple of 4: a crop exactly 4 x size
// wide and 6 x size (or 10 x, 14 x, ...) tall aborted the process (found by the fuzz
// target). Upstream has since required both steps to be 4. Such a crop (height steps
// 2, 6, 10, ...; 2 did not abort here, but takes the same branch) is taken one row
// shorter, so libyuv's general box filter handles it.
int avoid_libyuv_down4_assert(int w, int h, int size) {
  return w == 4 * size && h % size == 0 && (h / size) % 4 == 2 ? h - 1 : h;
}

}  // namespace

void resize_and_store(const DecodedRegion& region, bool flip, const ImageOutput& output,
                      std::vector<uint8_t>& scratch, void* destination) {
  const int size = output.size;
  const size_t pixels = static_cast<size_t>(size) * size;
  scratch.resize(2 * pixels * 4);  // the resized crop, then its mirror image
  // The crop rounded to whole region pixels (at most half a pixel of the scaled image).
  const int x = std::clamp(static_cast<int>(std::lround(region.x)), 0, region.width - 1);
  const int y = std::clamp(static_cast<int>(std::lround(region.y)), 0, region.height - 1);
  const int w = std::clamp(static_cast<int>(std::lround(region.crop_width)), 1, region.width - x);
  const int h = avoid_libyuv_down4_assert(
      w, std::clamp(static_cast<int>(std::lround(region.crop_height)), 1, region.height - y), size);
  const uint8_t* source =
      region.pixels + static_cast<size_t>(y) * region.stride + static_cast<size_t>(x) * 4;
  // libyuv treats the four bytes of RGBX as ARGB; scaling is channel-agnostic.
  libyuv::ARGBScale(source, static_cast<int>(region.stride), w, h, scratch.data(), size * 4, size,
                    size, libyuv::kFilterBox);
  const uint8_t* resized = scratch.data();
  if (flip) {
    uint8_t* mirrored = scratch.data() + pixels * 4;
    libyuv::ARGBMirror(resized, size * 4, mirrored, size * 4, size, size);
    resized = mirrored;
  }
  if (output.layout == ImageLayout::kUint8NHWC) {
    store_uint8(resized, size, static_cast<uint8_t*>(destination));
  } else {
    store_float(resized, size, output, static_cast<float*>(destination));
  }
}

}  // namespace evenfeed
