// The record stored for each sample in a shard: a fixed 32-byte header (docs/format.md,
// "Records") followed by the payload. Encoding and checking live here so the writer,
// the reader and `verify` agree on every byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace evenfeed {

enum class RecordKind : uint16_t { kJpeg = 1, kTokensU16 = 2, kTokensU32 = 3 };

struct RecordHeader {
  static constexpr uint32_t kMagic = 0x52465645u;  // "EVFR" read as little-endian
  static constexpr uint16_t kVersion = 1;
  static constexpr size_t kSize = 32;

  RecordKind kind = RecordKind::kJpeg;
  int32_t label = -1;
  uint32_t payload_bytes = 0;
  uint64_t length = 0;
  uint64_t checksum = 0;
};

const char* record_kind_name(RecordKind kind);

// Builds header + payload into `out` (cleared first), computing the checksum.
void encode_record(RecordKind kind, int32_t label, uint64_t length,
                   std::span<const std::byte> payload, std::vector<std::byte>& out);

// Parses the header of `value`. Returns a description of the first problem (bad
// magic, unknown version or kind, size mismatch) or nothing when it is well formed.
std::optional<std::string> decode_record_header(std::span<const std::byte> value,
                                                RecordHeader& header);

}  // namespace evenfeed
