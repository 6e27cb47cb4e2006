// Fuzz target: the token files `convert tokens` reads. Byte 0 picks the format:
// 0 JSON lines; 1 Megatron-LM (bytes 1-4: the .idx length L, then L bytes of .idx,
// then the .bin); 2 llm.c (end-of-text 50256). Every document is then decoded.
// Damaged input must be refused (evenfeed::Error) or named per document, nothing else.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "loader/token_sources.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  using evenfeed::fuzz::write_input;
  std::filesystem::path src;
  std::string format;
  const uint8_t kind = data[0] % 3;
  if (kind == 0) {
    src = write_input("input.jsonl", data + 1, size - 1), format = "jsonl";
  } else if (kind == 1) {
    if (size < 5) return 0;
    uint32_t idx_bytes = 0;
    std::memcpy(&idx_bytes, data + 1, 4);
    idx_bytes = static_cast<uint32_t>(std::min<size_t>(idx_bytes, size - 5));
    write_input("corpus.idx", data + 5, idx_bytes);
    src = write_input("corpus.bin", data + 5 + idx_bytes, size - 5 - idx_bytes);
    format = "megatron";
  } else {
    src = write_input("shard.bin", data + 1, size - 1), format = "llmc";
  }
  try {
    auto source = evenfeed::open_token_source(src, format, 50256u);
    std::vector<uint32_t> tokens;
    int32_t label = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(source->size(), 4096); ++i) {
      (void)source->read(i, tokens, label);
      (void)source->source_name(i);
    }
  } catch (const evenfeed::Error&) {
  }
  return 0;
}
