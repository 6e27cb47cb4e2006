// From a decoded crop region to one sample of a batch: an antialiased resize to the
// output size (libyuv's box filter: area averaging when shrinking, bilinear when
// growing, SIMD on x86 and ARM), then the flip and the output layout, uint8 NHWC (for
// normalisation on the GPU) or float32 NCHW normalised (for CPU consumers).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "loader/jpeg_region_decoder.h"

namespace evenfeed {

enum class ImageLayout { kUint8NHWC, kFloat32NCHW };

struct ImageOutput {
  int size = 224;  // square output, size x size
  ImageLayout layout = ImageLayout::kUint8NHWC;
  std::array<float, 3> mean = {0.485f, 0.456f, 0.406f};  // on the [0, 1] scale
  std::array<float, 3> std = {0.229f, 0.224f, 0.225f};

  size_t sample_bytes() const {
    return static_cast<size_t>(size) * size * 3 * (layout == ImageLayout::kUint8NHWC ? 1 : 4);
  }
};

// Resizes the crop of `region` to output.size x output.size RGBX into `scratch`
// (reused), then writes it, flipped when asked, to `destination` in output.layout.
void resize_and_store(const DecodedRegion& region, bool flip, const ImageOutput& output,
                      std::vector<uint8_t>& scratch, void* destination);

}  // namespace evenfeed
