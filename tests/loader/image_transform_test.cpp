// resize_and_store over the crop shapes where the libyuv we link takes its special
// integer-step paths: none may abort, and each gives the picture's own colour (within
// libyuv's rounding).
#include "loader/image_transform.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/resize_whole.h"

namespace evenfeed {
namespace {

// Resizes a uniform w x h RGBX picture (a crop of all of it) to size x size; returns
// the uint8 RGB output.
std::vector<uint8_t> resize_uniform(int w, int h, int size) {
  std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < pixels.size(); i += 4) {
    pixels[i] = 10;
    pixels[i + 1] = 120;
    pixels[i + 2] = 230;
    pixels[i + 3] = 255;
  }
  ImageOutput out;
  out.size = size;
  return testing::resize_whole(pixels, w, h, out, false);
}

// Every integer step from 1 to 12 each way, for a few output sizes. Before the guard
// in resize_and_store, 4 x 6 and 4 x 10 aborted in libyuv's ScaleARGBDown4Box.
TEST(ImageTransform, EveryIntegerStepResizesWithoutAborting) {
  for (int size : {8, 16, 24}) {  // outputs are at least 8 wide (`--size`)
    for (int kx = 1; kx <= 12; ++kx) {
      for (int ky = 1; ky <= 12; ++ky) {
        const std::vector<uint8_t> rgb = resize_uniform(kx * size, ky * size, size);
        // libyuv's filters may round a uniform value down by up to two.
        for (size_t i = 0; i < rgb.size(); i += 3) {
          ASSERT_NEAR(rgb[i], 10, 2) << size << " " << kx << " " << ky;
          ASSERT_NEAR(rgb[i + 1], 120, 2) << size << " " << kx << " " << ky;
          ASSERT_NEAR(rgb[i + 2], 230, 2) << size << " " << kx << " " << ky;
        }
      }
    }
  }
}

}  // namespace
}  // namespace evenfeed
