#include "core/checksum.h"

#include <fmt/format.h>
#include <xxhash.h>

#include "core/error.h"
#include "core/mapped_file.h"

namespace evenfeed {

uint64_t checksum64(std::span<const std::byte> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

uint64_t file_checksum64(const std::filesystem::path& path) {
  MappedFile file(path);
  return checksum64(file.bytes());
}

std::string checksum_hex(uint64_t checksum) {
  return fmt::format("{:016x}", checksum);
}

uint64_t parse_checksum_hex(const std::string& text, const std::string& where) {
  EVENFEED_CHECK(
      text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string::npos,
      "{}: checksum '{}' is not 16 lower-case hex digits; the manifest is damaged, "
      "re-run `evenfeed convert`",
      where, excerpt(text));
  return std::stoull(text, nullptr, 16);
}

}  // namespace evenfeed
