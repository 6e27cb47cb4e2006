#include "loader/turbojpeg_handle.h"

#include <utility>

namespace evenfeed {

TjHandle::TjHandle(Mode mode) : mode_(mode) {
  reset();
}

void TjHandle::reset() {
  if (handle_ != nullptr) tjDestroy(handle_);
  handle_ = nullptr;
  switch (mode_) {
    case Mode::kDecompress:
      handle_ = tjInitDecompress();
      break;
    case Mode::kCompress:
      handle_ = tjInitCompress();
      break;
  }
  if (handle_ == nullptr) fail("TurboJPEG initialisation failed: {}", tjGetErrorStr2(nullptr));
}

TjHandle::~TjHandle() {
  if (handle_ != nullptr) tjDestroy(handle_);
}

TjHandle::TjHandle(TjHandle&& other) noexcept
    : mode_(other.mode_), handle_(std::exchange(other.handle_, nullptr)) {}

}  // namespace evenfeed
