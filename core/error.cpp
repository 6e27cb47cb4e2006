#include "core/error.h"

#include <cstring>

namespace evenfeed {

void fail_errno(const std::string& what, const std::string& where, int error_number) {
  fail("{} failed for {}: {}", what, where, std::strerror(error_number));
}

}  // namespace evenfeed
