// evenfeed::Error is the one exception type of the library: its message says what
// failed, where (file, shard, sample id, offset) and what to do about it. The command
// line prints it as one line and exits non-zero.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace evenfeed {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws an Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Throws an Error naming the failed call and the errno text; `where` says which file.
[[noreturn]] void fail_errno(const std::string& what, const std::string& where, int error_number);

// A piece of input quoted in an error line: control bytes and bytes that are not
// well-formed UTF-8 become \xNN (printable ASCII and UTF-8 text, such as accented
// paths, stay), and text past `limit` bytes becomes "...", so a binary file read as
// text cannot fill the terminal or garble it.
std::string excerpt(std::string_view text, size_t limit = 60);

}  // namespace evenfeed

// EVENFEED_CHECK(cond, fmt, args...): throw an Error when `cond` is false.
#define EVENFEED_CHECK(cond, ...)               \
  do {                                          \
    if (!(cond)) ::evenfeed::fail(__VA_ARGS__); \
  } while (0)
