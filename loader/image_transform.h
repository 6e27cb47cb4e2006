// From a decoded crop region to one sample of a batch: a resize to the output size with
// libyuv's ARGBScale (SIMD on x86 and Arm), then the flip and the output layout, uint8
// NHWC (for normalisation on the GPU) or float32 NCHW normalised (for CPU consumers).
//
// For four-channel pixels libyuv filters bilinearly, two taps per axis, both when
// shrinking and growing (its box filter exists for single planes only; asked for box,
// ARGBScale averages only an exact 4x reduction). That is antialiased enough here
// because the DCT scaling before it (loader/jpeg_region_decoder.h) does the heavy
// reduction: at most 2x is left on the crop's shorter side, up to 2.7x on its longer
// side at the most extreme aspect ratios, and more only for crops over eight times the
// output. The loader tests hold the output to a supersampled reference (PSNR >= 28 dB).
// libyuv's row buffers come from per-thread scratch (loader/libyuv_scratch.h).
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
