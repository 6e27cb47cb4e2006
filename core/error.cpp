#include "core/error.h"

#include <cstring>

namespace evenfeed {

void fail_errno(const std::string& what, const std::string& where, int error_number) {
  fail("{} failed for {}: {}", what, where, std::strerror(error_number));
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (2-4 bytes, not a control
// character), or 0.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  if (lead == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) return 0;  // C1 controls
  return n;
}

}  // namespace

std::string excerpt(std::string_view text, size_t limit) {
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < limit) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (const size_t n = utf8_sequence_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

}  // namespace evenfeed
