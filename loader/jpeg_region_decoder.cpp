#include "loader/jpeg_region_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "loader/jpeg_image_arena.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_restart.h"
#include "loader/libjpeg_errors.h"

namespace evenfeed {
namespace {

// The DCT scale denominators with SIMD IDCTs, coarsest first.
constexpr int kDenominators[] = {8, 4, 2, 1};

// Adobe CMYK/YCCK JPEGs store inverted inks, so R = C * K / 255 and so on: `rows` rows
// of `width` 4-byte pixels, `stride` bytes apart, turned to RGBX in place.
void adobe_cmyk_to_rgbx(uint8_t* pixels, size_t stride, size_t width, int rows) {
  for (int r = 0; r < rows; ++r) {
    uint8_t* p = pixels + stride * static_cast<size_t>(r);
    for (size_t k = 0; k < width; ++k, p += 4) {
      const unsigned key = p[3];
      p[0] = static_cast<uint8_t>(p[0] * key / 255);
      p[1] = static_cast<uint8_t>(p[1] * key / 255);
      p[2] = static_cast<uint8_t>(p[2] * key / 255);
      p[3] = 255;
    }
  }
}

// Reads the next `rows` output rows of `c` into `buffer`, `stride` bytes apart. All of
// them in one call, so libjpeg writes each row group straight into place instead of
// through its spare row buffer (3-4% of decode time). A libjpeg error longjmps out, to
// the caller's setjmp.
void read_rows(jpeg_decompress_struct& c, std::vector<uint8_t>& buffer,
               std::vector<JSAMPROW>& pointers, size_t stride, int rows) {
  if (buffer.size() < stride * static_cast<size_t>(rows))
    buffer.resize(stride * static_cast<size_t>(rows));
  if (pointers.size() < static_cast<size_t>(rows)) pointers.resize(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) pointers[r] = buffer.data() + stride * static_cast<size_t>(r);
  for (int r = 0; r < rows;) {
    const auto left = static_cast<JDIMENSION>(rows - r);
    r += static_cast<int>(jpeg_read_scanlines(&c, pointers.data() + r, left));
  }
}

}  // namespace

int dct_denominator(const CropBox& crop, int out_width, int out_height) {
  for (int d : kDenominators) {
    if (crop.width / d >= out_width && crop.height / d >= out_height) return d;
  }
  return 1;
}

CropBox snap_to_dct_grid(const CropBox& crop, int d, int width, int height) {
  auto snap = [d](int v) { return (v + d / 2) / d * d; };
  CropBox out = crop;
  out.x = std::min(snap(crop.x), std::max(0, (width - d) / d * d));
  out.y = std::min(snap(crop.y), std::max(0, (height - d) / d * d));
  out.width = std::clamp(snap(crop.width), d, std::max(d, (width - out.x) / d * d));
  out.height = std::clamp(snap(crop.height), d, std::max(d, (height - out.y) / d * d));
  return out;
}

struct JpegRegionDecoder::State {
  JpegImageArena arena;  // libjpeg's per-image memory, kept from image to image
  jpeg_decompress_struct cinfo{};
  LibjpegErrors err{};
  std::vector<uint8_t> buffer;  // decoded rows; grows to the largest region, then reused
  std::vector<uint8_t> cmyk_row;
  std::vector<JSAMPROW> rows;     // pointers into buffer, one per row
  McuLayout layout;               // of the current image, when it has the restart layout
  std::vector<std::byte> window;  // the crop's MCUs as a JPEG of their own
};

JpegRegionDecoder::JpegRegionDecoder() : state_(std::make_unique<State>()) {
  state_->cinfo.err = state_->err.install();
  jpeg_create_decompress(&state_->cinfo);
  state_->arena.install(reinterpret_cast<j_common_ptr>(&state_->cinfo));
}

JpegRegionDecoder::~JpegRegionDecoder() {
  jpeg_destroy_decompress(&state_->cinfo);
}

uint64_t JpegRegionDecoder::memory_growths() const {
  return state_->arena.growths();
}

std::optional<std::string> JpegRegionDecoder::decode(std::span<const std::byte> jpeg,
                                                     const CropBox& crop, int out_width,
                                                     int out_height, DecodedRegion& region) {
  State& s = *state_;
  if (auto missing = missing_jpeg_tables(jpeg)) return missing;
  // With a restart marker after every MCU, only the MCUs around the crop are decoded
  // (loader/jpeg_restart.h); the crop is then relative to their window.
  if (read_mcu_layout(jpeg, s.layout)) {
    const McuWindow window = window_for_crop(s.layout, crop);
    if (!window.whole(s.layout)) {
      cut_mcu_window(jpeg, s.layout, window, s.window);
      CropBox local = crop;
      local.x -= window.column0 * s.layout.mcu_width;
      local.y -= window.row0 * s.layout.mcu_height;
      return decode_whole(s.window, local, out_width, out_height, region);
    }
  }
  return decode_whole(jpeg, crop, out_width, out_height, region);
}

std::optional<std::string> JpegRegionDecoder::decode_whole(std::span<const std::byte> jpeg,
                                                           const CropBox& crop, int out_width,
                                                           int out_height, DecodedRegion& region) {
  State& s = *state_;
  jpeg_decompress_struct& c = s.cinfo;
  if (setjmp(s.err.jump)) {
    jpeg_abort_decompress(&c);
    return describe_jpeg_damage(s.err.message, "corrupt JPEG");
  }
  jpeg_mem_src(&c, reinterpret_cast<const unsigned char*>(jpeg.data()),
               static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&c, TRUE);
  const bool cmyk = c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK;
  c.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBX;
  c.do_fancy_upsampling = TRUE;  // keeps merged upsampling (and its skip bug) out
  c.dct_method = JDCT_ISLOW;
  const int denominator = dct_denominator(crop, out_width, out_height);
  c.scale_num = 1;
  c.scale_denom = static_cast<unsigned int>(denominator);
  jpeg_start_decompress(&c);
  const double d = denominator;
  // Columns: one extra on each side (the crop-edge trap), widened by libjpeg to iMCUs.
  const int full_width = static_cast<int>(c.output_width),
            full_height = static_cast<int>(c.output_height);
  const int x0 = std::clamp(static_cast<int>(std::floor(crop.x / d)) - 1, 0, full_width - 1);
  const int x1 =
      std::clamp(static_cast<int>(std::ceil((crop.x + crop.width) / d)) + 1, x0 + 1, full_width);
  JDIMENSION x_offset = static_cast<JDIMENSION>(x0), columns = static_cast<JDIMENSION>(x1 - x0);
  if (x0 > 0 || x1 < full_width) jpeg_crop_scanline(&c, &x_offset, &columns);
  const int y0 = std::clamp(static_cast<int>(std::floor(crop.y / d)) - 1, 0, full_height - 1);
  const int y1 =
      std::clamp(static_cast<int>(std::ceil((crop.y + crop.height) / d)) + 1, y0 + 1, full_height);
  if (y0 > 0) jpeg_skip_scanlines(&c, static_cast<JDIMENSION>(y0));
  const size_t stride = static_cast<size_t>(c.output_width) * 4;
  const int rows = y1 - y0;
  read_rows(c, s.buffer, s.rows, stride, rows);
  if (cmyk) adobe_cmyk_to_rgbx(s.buffer.data(), stride, c.output_width, rows);
  // Stop here: the rows below the crop are never decoded.
  jpeg_abort_decompress(&c);
  region.pixels = s.buffer.data();
  region.width = static_cast<int>(c.output_width);
  region.height = rows;
  region.stride = stride;
  region.x = crop.x / d - static_cast<double>(x_offset);
  region.y = crop.y / d - y0;
  region.crop_width = crop.width / d;
  region.crop_height = crop.height / d;
  region.scale_denominator = denominator;
  return std::nullopt;
}

}  // namespace evenfeed
