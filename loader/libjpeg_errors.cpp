#include "loader/libjpeg_errors.h"

namespace evenfeed {
namespace {

void on_error(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_error(cinfo);  // a warning: corrupt or truncated data
}

}  // namespace

jpeg_error_mgr* LibjpegErrors::install() {
  jpeg_std_error(&base);
  base.error_exit = on_error;
  base.emit_message = on_message;
  message[0] = 0;
  return &base;
}

}  // namespace evenfeed
