// Checksums of payloads and whole files: XXH3-64 from xxHash, which runs at memory
// speed, so checking every record on read costs little next to decoding it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace evenfeed {

uint64_t checksum64(std::span<const std::byte> bytes);

// Checksum of a whole file, read through a memory map. Throws Error if unreadable.
uint64_t file_checksum64(const std::filesystem::path& path);

// 16 lower-case hex digits, the form the manifest stores.
std::string checksum_hex(uint64_t checksum);
// Parses checksum_hex's form; throws Error naming `where` on anything else.
uint64_t parse_checksum_hex(const std::string& text, const std::string& where);

}  // namespace evenfeed
