// What convert and verify need to know about a JPEG before storing or trusting it:
// its size, colour space, subsampling and whether it is progressive, and (on request)
// whether it decodes cleanly to the end. Also tells other image formats apart so the
// error can say what a rejected file actually is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/turbojpeg_handle.h"

namespace evenfeed {

struct JpegInfo {
  int width = 0;
  int height = 0;
  int subsampling = -1;  // TJSAMP_*
  int colorspace = -1;   // TJCS_*
  bool progressive = false;
};

// "JPEG", "PNG", "GIF", "BMP", "WebP", "TIFF", "PPM" or "" when unknown.
std::string sniff_image_format(std::span<const std::byte> bytes);

// Parses the JPEG headers; with `check_decode` also entropy-decodes the whole image (at
// 1/8 scale, so the IDCT is cheap) and treats any libjpeg warning as damage. Returns a
// description of the problem ("truncated JPEG: ...", "corrupt JPEG data: ...") or
// nothing. `scratch` is reused between calls; `decompressor` is reset after a failure.
std::optional<std::string> probe_jpeg(TjHandle& decompressor, std::span<const std::byte> bytes,
                                      bool check_decode, JpegInfo& info,
                                      std::vector<unsigned char>& scratch);

// A libjpeg decoder object keeps the quantization and Huffman tables of the last image
// it read, and uses them for a later image that does not define its own: a JPEG
// missing a table would decode (to garbage) or not depending on what the same thread
// decoded before. Every reader here calls this first, so such a file is refused the
// same way whatever came before: "corrupt JPEG: Quantization table 0x01 was not
// defined", or, for a Huffman-coded frame without Huffman tables (a Motion-JPEG
// frame), that it is not supported. Walks the marker segments up to the first scan;
// what it cannot parse it leaves to the decoder (nothing is returned).
std::optional<std::string> missing_jpeg_tables(std::span<const std::byte> bytes);

// How a decoder's message about damaged data is reported, by every JPEG reader here:
// "truncated JPEG: ..." when the data ends early, else "<corrupt>: ...".
std::string describe_jpeg_damage(const std::string& message,
                                 const char* corrupt = "corrupt JPEG data");

// The TurboJPEG pixel format a JPEG of this colour space decodes to without conversion
// TurboJPEG lacks (CMYK and YCCK stay CMYK; grey stays grey; the rest becomes RGB).
int native_pixel_format(int colorspace);

}  // namespace evenfeed
