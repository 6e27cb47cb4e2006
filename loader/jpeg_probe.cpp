#include "loader/jpeg_probe.h"

#include <fmt/format.h>

#include <cstring>

#include "loader/jpeg_segments.h"

namespace evenfeed {
namespace {

bool starts_with(std::span<const std::byte> bytes, const char* magic, size_t offset = 0) {
  size_t n = std::strlen(magic);
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, magic, n) == 0;
}

// True when the first frame is progressive (SOF2, SOF6, SOF10, SOF14).
bool is_progressive(std::span<const std::byte> bytes) {
  bool progressive = false;
  walk_jpeg_segments(bytes, [&](unsigned char marker, size_t, size_t) {
    if (!is_jpeg_frame_marker(marker)) return true;
    progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
    return false;
  });
  return progressive;
}

}  // namespace

std::optional<std::string> missing_jpeg_tables(std::span<const std::byte> bytes) {
  JpegTableUse use;
  if (!starts_with(bytes, "\xFF\xD8") || !read_jpeg_table_use(bytes, use)) return std::nullopt;
  for (int t = 0; t < 4; ++t) {
    if (use.quant_used[t] && !use.quant_defined[t])
      return fmt::format("corrupt JPEG: Quantization table 0x{:02x} was not defined", t);
  }
  if (missing_huffman_tables(use) != 0)
    return std::string(
        "JPEG without Huffman tables (a Motion-JPEG frame?) is not supported; rewrite it "
        "with `jpegtran -copy all -optimize`");
  return std::nullopt;
}

std::string sniff_image_format(std::span<const std::byte> bytes) {
  if (starts_with(bytes, "\xFF\xD8\xFF")) return "JPEG";
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n")) return "PNG";
  if (starts_with(bytes, "GIF87a") || starts_with(bytes, "GIF89a")) return "GIF";
  if (starts_with(bytes, "BM")) return "BMP";
  if (starts_with(bytes, "RIFF") && starts_with(bytes, "WEBP", 8)) return "WebP";
  if (starts_with(bytes, "II*") || starts_with(bytes, "MM\0*")) return "TIFF";
  if (bytes.size() >= 2 && starts_with(bytes, "P") && bytes[1] >= std::byte{'1'} &&
      bytes[1] <= std::byte{'6'})
    return "PPM";
  return "";
}

std::string describe_jpeg_damage(const std::string& message, const char* corrupt) {
  if (message.find("Premature end") != std::string::npos) return "truncated JPEG: " + message;
  return std::string(corrupt) + ": " + message;
}

int native_pixel_format(int colorspace) {
  if (colorspace == TJCS_GRAY) return TJPF_GRAY;
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) return TJPF_CMYK;
  return TJPF_RGB;
}

std::optional<std::string> probe_jpeg(TjHandle& decompressor, std::span<const std::byte> bytes,
                                      bool check_decode, JpegInfo& info,
                                      std::vector<unsigned char>& scratch) {
  if (bytes.empty()) return std::string("empty file");
  if (sniff_image_format(bytes) != "JPEG") return std::string("not a JPEG (no SOI marker)");
  if (auto missing = missing_jpeg_tables(bytes)) return missing;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  tjhandle h = decompressor.get();
  if (tjDecompressHeader3(h, data, bytes.size(), &info.width, &info.height, &info.subsampling,
                          &info.colorspace) != 0) {
    const std::string error = tjGetErrorStr2(h);
    decompressor.reset();
    // 12- and 16-bit JPEGs (medical, some cameras' raw previews) are valid files that
    // the 8-bit decoder cannot read: say so, rather than calling them corrupt.
    if (error.find("Unsupported JPEG data precision") != std::string::npos)
      return fmt::format("unsupported JPEG: {} (only 8-bit JPEGs decode); re-encode it as 8-bit",
                         error);
    // Sampling factors other than TurboJPEG's (4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, 4:1:0,
    // grey), e.g. Cb at 1x1 and Cr at 2x2: legal but rare, and not decodable here.
    if (error.find("Could not determine subsampling type") != std::string::npos)
      return fmt::format(
          "unsupported JPEG: its chroma subsampling is none of 4:4:4, 4:2:2, 4:2:0, 4:4:0, "
          "4:1:1 ({}); re-encode it",
          error);
    return fmt::format("corrupt JPEG header: {}", error);
  }
  if (info.width <= 0 || info.height <= 0)
    return std::string("JPEG header has zero width or height");
  info.progressive = is_progressive(bytes);
  if (!check_decode) return std::nullopt;

  const tjscalingfactor eighth{1, 8};
  int w = TJSCALED(info.width, eighth), h8 = TJSCALED(info.height, eighth);
  int format = native_pixel_format(info.colorspace);
  scratch.resize(static_cast<size_t>(w) * h8 * tjPixelSize[format]);
  if (tjDecompress2(h, data, bytes.size(), scratch.data(), w, 0, h8, format,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_FASTDCT) != 0) {
    std::string message = tjGetErrorStr2(h);
    decompressor.reset();
    return describe_jpeg_damage(message);
  }
  return std::nullopt;
}

}  // namespace evenfeed
