// One-line messages to stderr, prefixed with the program name; `set_quiet` silences
// the informational ones (warnings always print).
#pragma once

#include <fmt/format.h>

#include <string>

namespace evenfeed {

void set_quiet(bool quiet);
bool quiet();
void log_line(const char* level, const std::string& message);

template <typename... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  if (!quiet()) log_line("", fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void log_warn(fmt::format_string<Args...> format, Args&&... args) {
  log_line("warning: ", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace evenfeed
