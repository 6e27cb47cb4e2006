// RAII ownership of TurboJPEG handles, and TJ_CHECK, which turns a failed call into
// an evenfeed::Error carrying TurboJPEG's own message. Handles are not thread-safe:
// keep one per thread.
#pragma once

#include <turbojpeg.h>

#include "core/error.h"

#define TJ_CHECK(handle, call, where)                                                          \
  do {                                                                                         \
    if ((call) != 0)                                                                           \
      ::evenfeed::fail("{}: TurboJPEG {} failed: {}", (where), #call, tjGetErrorStr2(handle)); \
  } while (0)

namespace evenfeed {

class TjHandle {
 public:
  enum class Mode { kDecompress, kCompress };
  explicit TjHandle(Mode mode);
  ~TjHandle();
  TjHandle(TjHandle&& other) noexcept;
  TjHandle(const TjHandle&) = delete;
  TjHandle& operator=(const TjHandle&) = delete;
  TjHandle& operator=(TjHandle&&) = delete;
  tjhandle get() const { return handle_; }
  // Replaces the handle with a fresh one. TurboJPEG 2.1 leaves a handle mid-header
  // after an error (tjDecompressHeader3 returns without aborting), and every later
  // image on it then fails: call this after any failed call.
  void reset();

 private:
  Mode mode_;
  tjhandle handle_ = nullptr;
};

}  // namespace evenfeed
