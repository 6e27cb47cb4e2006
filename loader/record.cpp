#include "loader/record.h"

#include <fmt/format.h>

#include <cstring>

#include "core/checksum.h"
#include "core/error.h"

namespace evenfeed {
namespace {

template <typename T>
void put(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

template <typename T>
T get(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

}  // namespace

const char* record_kind_name(RecordKind kind) {
  switch (kind) {
    case RecordKind::kJpeg:
      return "jpeg";
    case RecordKind::kTokensU16:
      return "tokens-uint16";
    case RecordKind::kTokensU32:
      return "tokens-uint32";
  }
  return "unknown";
}

void encode_record(RecordKind kind, int32_t label, uint64_t length,
                   std::span<const std::byte> payload, std::vector<std::byte>& out) {
  EVENFEED_CHECK(payload.size() <= UINT32_MAX, "record payload of {} bytes exceeds the 4 GiB limit",
                 payload.size());
  out.resize(RecordHeader::kSize + payload.size());
  std::byte* h = out.data();
  put<uint32_t>(h + 0, RecordHeader::kMagic);
  put<uint16_t>(h + 4, RecordHeader::kVersion);
  put<uint16_t>(h + 6, static_cast<uint16_t>(kind));
  put<int32_t>(h + 8, label);
  put<uint32_t>(h + 12, static_cast<uint32_t>(payload.size()));
  put<uint64_t>(h + 16, length);
  put<uint64_t>(h + 24, checksum64(payload));
  if (!payload.empty()) std::memcpy(h + RecordHeader::kSize, payload.data(), payload.size());
}

std::optional<std::string> decode_record_header(std::span<const std::byte> value,
                                                RecordHeader& header) {
  if (value.size() < RecordHeader::kSize) {
    return fmt::format("record is {} bytes, shorter than its 32-byte header", value.size());
  }
  const std::byte* h = value.data();
  uint32_t magic = get<uint32_t>(h + 0);
  if (magic != RecordHeader::kMagic) return fmt::format("bad record magic 0x{:08x}", magic);
  uint16_t version = get<uint16_t>(h + 4);
  if (version != RecordHeader::kVersion) {
    return fmt::format("record version {} is not supported (this build reads version {})", version,
                       RecordHeader::kVersion);
  }
  uint16_t kind = get<uint16_t>(h + 6);
  if (kind < 1 || kind > 3) return fmt::format("unknown record kind {}", kind);
  header.kind = static_cast<RecordKind>(kind);
  header.label = get<int32_t>(h + 8);
  header.payload_bytes = get<uint32_t>(h + 12);
  header.length = get<uint64_t>(h + 16);
  header.checksum = get<uint64_t>(h + 24);
  if (value.size() != RecordHeader::kSize + header.payload_bytes) {
    return fmt::format("record header says {} payload bytes but the record holds {}",
                       header.payload_bytes, value.size() - RecordHeader::kSize);
  }
  return std::nullopt;
}

}  // namespace evenfeed
