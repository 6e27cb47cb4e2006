// Decodes only what a crop needs. A JPEG with a restart marker after every MCU (as
// `convert` writes them, loader/jpeg_restart.h) is first cut down to the MCUs around the
// crop, so nothing else is entropy-decoded. Then, for each image: the smallest power-of-two DCT
// scale (1/8, 1/4, 1/2, 1, the scales with SIMD IDCTs) whose output still covers the crop at the
// target size, then only the crop's columns (jpeg_crop_scanline) and rows (skip the rows above,
// stop after the last), as RGBX. Greyscale becomes RGB, CMYK/YCCK is converted to RGB. One decoder
// per thread; it is reused from image to image.
//
// Traps in libjpeg-turbo 2.1.5 this avoids: merged upsampling with jpeg_skip_scanlines
// on a reused object is a use-after-free, so fancy upsampling stays on (which disables
// merged upsampling); and jpeg_crop_scanline with fancy upsampling alters the crop's
// outermost columns, so one extra column is decoded on each side and left unused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/crop.h"

namespace evenfeed {

struct DecodedRegion {
  const uint8_t* pixels = nullptr;  // RGBX, `stride` bytes per row
  int width = 0, height = 0;
  size_t stride = 0;
  // The crop within the region, in region pixels (after DCT scaling).
  double x = 0, y = 0, crop_width = 0, crop_height = 0;
  int scale_denominator = 1;
};

// The DCT scale denominator (1, 2, 4 or 8) decode() uses for this crop and output: the
// coarsest at which the crop still has at least the output's pixels.
int dct_denominator(const CropBox& crop, int out_width, int out_height);

// The crop moved to whole pixels of the 1/d-scaled image (origin and size multiples of
// d, within width x height), so the decoded region holds it exactly and the resize needs
// no sub-pixel placement. Moves each edge by at most d/2 source pixels.
CropBox snap_to_dct_grid(const CropBox& crop, int d, int width, int height);

class JpegRegionDecoder {
 public:
  JpegRegionDecoder();
  ~JpegRegionDecoder();
  JpegRegionDecoder(const JpegRegionDecoder&) = delete;
  JpegRegionDecoder& operator=(const JpegRegionDecoder&) = delete;

  // Decodes the part of `jpeg` that covers `crop` (source pixels) for an output of
  // out_width x out_height. Returns the problem (corrupt or truncated data) or nothing;
  // `region` points into this decoder's buffer until the next call.
  std::optional<std::string> decode(std::span<const std::byte> jpeg, const CropBox& crop,
                                    int out_width, int out_height, DecodedRegion& region);

  // How often libjpeg's per-image memory had to grow (loader/jpeg_image_arena.h): it
  // stops growing once the largest image has been decoded, and then decoding
  // allocates nothing.
  uint64_t memory_growths() const;

 private:
  // decode() without the restart-layout window: the crop's rows and columns of the
  // whole entropy-coded image.
  std::optional<std::string> decode_whole(std::span<const std::byte> jpeg, const CropBox& crop,
                                          int out_width, int out_height, DecodedRegion& region);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace evenfeed
