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

// How a decoder's message about damaged data is reported, by every JPEG reader here:
// "truncated JPEG: ..." when the data ends early, else "<corrupt>: ...".
std::string describe_jpeg_damage(const std::string& message,
                                 const char* corrupt = "corrupt JPEG data");

// The TurboJPEG pixel format a JPEG of this colour space decodes to without conversion
// TurboJPEG lacks (CMYK and YCCK stay CMYK; grey stays grey; the rest becomes RGB).
int native_pixel_format(int colorspace);

}  // namespace evenfeed
