#include "loader/jpeg_encode.h"

#include <png.h>

#include <fmt/format.h>

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
