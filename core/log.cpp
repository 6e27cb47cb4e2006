#include "core/log.h"

#include <atomic>
#include <cstdio>

namespace evenfeed {
namespace {
std::atomic<bool> g_quiet{false};
}

void set_quiet(bool q) {
  g_quiet.store(q);
}
bool quiet() {
  return g_quiet.load();
}

void log_line(const char* level, const std::string& message) {
  std::fprintf(stderr, "evenfeed: %s%s\n", level, message.c_str());
}

}  // namespace evenfeed
