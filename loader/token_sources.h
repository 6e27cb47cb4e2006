// The token files `convert tokens` reads: JSON lines ({"tokens": [...], "label": n}),
// Megatron-LM indexed datasets (.bin + .idx, one sample per sequence) and llm.c token
// shards (.bin with a 1 KiB header, documents split at the end-of-text id). Files are
// memory-mapped and every document located up front; decoding one is then independent
// of the others, so conversion runs them in parallel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mapped_file.h"

namespace evenfeed {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // "jsonl", "megatron" or "llmc".
  virtual const char* format() const = 0;
  virtual uint64_t size() const = 0;
  // "FILE:line N", "FILE:sequence N" or "FILE:document N".
  virtual std::string source_name(uint64_t i) const = 0;
  // Decodes document i (tokens cleared first; label -1 when absent). Returns a
  // description of the problem or nothing.
  virtual std::optional<std::string> read(uint64_t i, std::vector<uint32_t>& tokens,
                                          int32_t& label) const = 0;
  // Bytes of input, for shard sizing.
  virtual uint64_t input_bytes() const = 0;
};

// SRC is a file or a directory of files of one format. `format` is "auto" (by file
// extension and header), "jsonl", "megatron" or "llmc"; `eot` is required for llm.c.
std::unique_ptr<TokenSource> open_token_source(const std::filesystem::path& src,
                                               const std::string& format,
                                               std::optional<uint32_t> eot);

}  // namespace evenfeed
