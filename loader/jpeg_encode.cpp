#include "loader/jpeg_encode.h"

#include <png.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace evenfeed {

void encode_jpeg(const TjHandle& compressor, const unsigned char* pixels, int width, int height,
                 int pixel_format, const JpegEncodeOptions& options, std::vector<std::byte>& out) {
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  int flags = TJFLAG_ACCURATEDCT | (options.progressive ? TJFLAG_PROGRESSIVE : 0);
  int subsampling = pixel_format == TJPF_GRAY ? TJSAMP_GRAY : options.subsampling;
  int rc = tjCompress2(compressor.get(), pixels, width, 0, height, pixel_format, &jpeg, &size,
                       subsampling, options.quality, flags);
  if (rc != 0) {
    tjFree(jpeg);
    fail("JPEG encoding failed: {}", tjGetErrorStr2(compressor.get()));
  }
  out.resize(size);
  std::memcpy(out.data(), jpeg, size);
  tjFree(jpeg);
}

namespace {

struct Declared {
  uint64_t width = 0, height = 0;
};

uint64_t little_endian(std::span<const std::byte> bytes, size_t at, size_t count) {
  uint64_t value = 0;
  for (size_t k = count; k-- > 0;) value = value << 8 | std::to_integer<uint64_t>(bytes[at + k]);
  return value;
}

// The size a BMP header declares, read where libjpeg-turbo's rdbmp.c reads it (16-bit
// fields in an OS/2 header of 12 bytes, 32-bit ones otherwise; a negative height means
// top-down). Nothing when the header is cut short.
std::optional<Declared> declared_bmp_size(std::span<const std::byte> bytes) {
  if (bytes.size() < 26) return std::nullopt;
  if (little_endian(bytes, 14, 4) == 12) {
    return Declared{little_endian(bytes, 18, 2), little_endian(bytes, 20, 2)};
  }
  const auto width = static_cast<int32_t>(little_endian(bytes, 18, 4));
  const auto height = static_cast<int32_t>(little_endian(bytes, 22, 4));
  return Declared{static_cast<uint64_t>(std::abs(static_cast<int64_t>(width))),
                  static_cast<uint64_t>(std::abs(static_cast<int64_t>(height)))};
}

// The size a PPM/PGM header declares, read as libjpeg-turbo's rdppm.c reads it: after
// the two magic bytes, integers separated by whitespace, '#' comments running to the
// end of their line, each integer ended by (and consuming) any non-digit. Nothing when
// the header is cut short or not numeric.
std::optional<Declared> declared_ppm_size(std::span<const std::byte> bytes) {
  size_t at = 2;
  auto next = [&]() -> int {
    if (at >= bytes.size()) return -1;
    int ch = std::to_integer<int>(bytes[at++]);
    if (ch == '#') {
      while (at < bytes.size() && std::to_integer<int>(bytes[at]) != '\n' &&
             std::to_integer<int>(bytes[at]) != '\r')
        ++at;
      ch = at < bytes.size() ? std::to_integer<int>(bytes[at++]) : -1;
    }
    return ch;
  };
  auto integer = [&]() -> std::optional<uint64_t> {
    int ch = next();
    while (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') ch = next();
    if (ch < '0' || ch > '9') return std::nullopt;
    uint64_t value = static_cast<uint64_t>(ch - '0');
    while ((ch = next()) >= '0' && ch <= '9' && value < (uint64_t{1} << 40))
      value = value * 10 + static_cast<uint64_t>(ch - '0');
    return value;
  };
  const std::optional<uint64_t> width = integer(), height = width ? integer() : std::nullopt;
  if (!width || !height) return std::nullopt;
  return Declared{*width, *height};
}

}  // namespace

std::optional<std::string> read_rgb_image(const std::filesystem::path& path,
                                          std::span<const std::byte> bytes,
                                          const std::string& format, RgbImage& out) {
  if (format == "PNG") {
    png_image image;
    std::memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
      return std::string("unreadable PNG: ") + image.message;
    }
    // A header is cheap to forge: refuse sizes no photograph has before allocating.
    if (static_cast<uint64_t>(image.width) * image.height > kMaxReencodePixels) {
      png_image_free(&image);
      return fmt::format("PNG of {} x {} pixels is larger than {} megapixels; resize it first",
                         image.width, image.height, kMaxReencodePixels / 1000000);
    }
    // 16-bit samples without gAMA or sRGB chunks: libpng would assume linear light and
    // brighten them on the way to 8 bits; they are sRGB-encoded like 8-bit ones (what
    // every tool writing 16-bit PNGs without those chunks means, and how PIL reads them).
    image.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
    image.format = PNG_FORMAT_RGB;
    out.width = static_cast<int>(image.width);
    out.height = static_cast<int>(image.height);
    out.rgb.resize(PNG_IMAGE_SIZE(image));
    png_color white{255, 255, 255};
    if (!png_image_finish_read(&image, &white, out.rgb.data(), 0, nullptr)) {
      std::string message = image.message;
      png_image_free(&image);
      return "damaged PNG: " + message;
    }
    return std::nullopt;
  }
  if (format == "BMP" || format == "PPM") {
    // TurboJPEG's loader allocates what the header declares before reading a pixel.
    const std::optional<Declared> declared =
        format == "BMP" ? declared_bmp_size(bytes) : declared_ppm_size(bytes);
    if (!declared) return "unreadable " + format + ": its header is cut short or not numeric";
    if (declared->width > kMaxReencodePixels || declared->height > kMaxReencodePixels ||
        declared->width * declared->height > kMaxReencodePixels) {
      return fmt::format("{} of {} x {} pixels is larger than {} megapixels; resize it first",
                         format, declared->width, declared->height, kMaxReencodePixels / 1000000);
    }
    int width = 0, height = 0, pixel_format = TJPF_RGB;
    unsigned char* pixels = tjLoadImage(path.c_str(), &width, 1, &height, &pixel_format, 0);
    if (pixels == nullptr) return "unreadable " + format + ": " + tjGetErrorStr2(nullptr);
    out.width = width;
    out.height = height;
    out.rgb.assign(pixels, pixels + static_cast<size_t>(width) * height * 3);
    tjFree(pixels);
    return std::nullopt;
  }
  return format.empty() ? std::string("not an image evenfeed can read")
                        : format + " is not supported; convert it to JPEG or PNG first";
}

bool can_reencode(const std::string& format) {
  return format == "PNG" || format == "BMP" || format == "PPM";
}

}  // namespace evenfeed
