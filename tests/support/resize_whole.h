// resize_and_store over a whole picture, for the tests of the resize path.
#pragma once

#include <cstdint>
#include <vector>

#include "loader/image_transform.h"

namespace evenfeed::testing {

// Resizes a w x h RGBX picture, the crop being all of it, into `out`'s layout and size;
// returns the sample's bytes.
inline std::vector<uint8_t> resize_whole(const std::vector<uint8_t>& rgbx, int w, int h,
                                         const ImageOutput& out, bool flip) {
  DecodedRegion region;
  region.pixels = rgbx.data();
  region.width = w;
  region.height = h;
  region.stride = static_cast<size_t>(w) * 4;
  region.crop_width = w;
  region.crop_height = h;
  std::vector<uint8_t> scratch, destination(out.sample_bytes());
  resize_and_store(region, flip, out, scratch, destination.data());
  return destination;
}

}  // namespace evenfeed::testing
