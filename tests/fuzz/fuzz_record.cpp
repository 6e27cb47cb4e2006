// Fuzz target: a record as read from a shard (header checks, then the payload checksum).
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/checksum.h"
#include "loader/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> value(reinterpret_cast<const std::byte*>(data), size);
  evenfeed::RecordHeader header;
  if (!evenfeed::decode_record_header(value, header)) {
    const auto payload = value.subspan(evenfeed::RecordHeader::kSize);
    volatile bool same = evenfeed::checksum64(payload) == header.checksum;
    (void)same;
  }
  return 0;
}
