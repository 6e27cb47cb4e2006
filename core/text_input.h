// Small helpers for the text files users hand us (lengths files, image lists).
#pragma once

#include <string>
#include <string_view>

namespace evenfeed {

// Windows editors (Notepad, Excel's "CSV UTF-8") may begin a UTF-8 file with a
// byte-order mark. It is no part of the first line's text, and an error quoting it
// would show an invisible character, so readers drop it from their first line.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

inline void drop_byte_order_mark(std::string& first_line) {
  if (first_line.starts_with(kUtf8ByteOrderMark)) first_line.erase(0, kUtf8ByteOrderMark.size());
}

}  // namespace evenfeed
