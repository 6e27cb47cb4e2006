// Encoding pixels as JPEG (TurboJPEG), and reading the non-JPEG sources that
// `convert --reencode` accepts (PNG through libpng, BMP and PPM through TurboJPEG).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/turbojpeg_handle.h"

namespace evenfeed {

struct JpegEncodeOptions {
  int quality = 95;
  int subsampling = TJSAMP_420;
  bool progressive = false;
};

// Encodes `pixels` (width x height, `pixel_format` TJPF_*) into `out`.
void encode_jpeg(const TjHandle& compressor, const unsigned char* pixels, int width, int height,
                 int pixel_format, const JpegEncodeOptions& options, std::vector<std::byte>& out);

// Decoded RGB pixels of a PNG, BMP or PPM file.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
};

// The largest image --reencode decodes (16K x 16K): larger headers are refused.
inline constexpr uint64_t kMaxReencodePixels = uint64_t{1} << 28;

// Whether read_rgb_image reads `format` (as named by sniff_image_format): PNG, BMP, PPM.
bool can_reencode(const std::string& format);

// Reads a PNG (any bit depth, 16-bit samples taken as sRGB unless the file says
// otherwise; alpha composited on white), BMP or PPM. Returns a description of the
// problem or nothing.
std::optional<std::string> read_rgb_image(const std::filesystem::path& path,
                                          std::span<const std::byte> bytes,
                                          const std::string& format, RgbImage& out);

}  // namespace evenfeed
