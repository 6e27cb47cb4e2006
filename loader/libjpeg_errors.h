// How our libjpeg callers learn of errors. libjpeg reports them through a callback that
// must not return: it longjmps back to the caller's setjmp with the message formatted.
// Warnings (corrupt or truncated data) are errors too, so a damaged image is never
// silently used; nothing is printed.
#pragma once

#include <csetjmp>
#include <cstdio>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

namespace evenfeed {

struct LibjpegErrors {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];

  // Sets up `base` with the jumping handlers; assign the result to a compress or
  // decompress struct's `err` before creating it. setjmp(jump) at each call site.
  jpeg_error_mgr* install();
};

}  // namespace evenfeed
