// Fuzz target: what `convert --reencode` reads besides JPEG: the format sniffed from
// the first bytes, then PNG (libpng), BMP or PPM (TurboJPEG's loader) decoded to RGB.
#include <cstddef>
#include <cstdint>
#include <span>

#include "loader/jpeg_encode.h"
#include "loader/jpeg_probe.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const std::string format = evenfeed::sniff_image_format(bytes);
  // TurboJPEG's BMP/PPM loader reads from a file with the right extension.
  const std::string name = format == "BMP" ? "input.bmp" : format == "PPM" ? "input.ppm" : "input";
  const auto path = evenfeed::fuzz::write_input(name, data, size);
  evenfeed::RgbImage image;
  (void)evenfeed::read_rgb_image(path, bytes, format, image);
  return 0;
}
