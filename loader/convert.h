// `evenfeed convert`: image folders, image lists and token files into a dataset
// (docs/format.md). Conversion is parallel (TBB), checks every input, and is atomic:
// the output appears complete or not at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace evenfeed {

enum class OnError { kFail, kSkip };

struct ConvertOptions {
  // Number of shards; 0 picks one per ~256 MiB of input (at least one).
  int shards = 0;
  // Worker threads; 0 uses every core.
  int threads = 0;
  // kFail stops at the first bad input (nothing is written); kSkip leaves it out and
  // lists it with the reason in the report.
  OnError on_error = OnError::kFail;
  // Replace an existing output directory.
  bool force = false;
  // Images: entropy-decode every JPEG to catch truncated or corrupt files (on by default).
  bool check_decode = true;
  // Images: rewrite progressive JPEGs as baseline, losslessly (the DCT coefficients are
  // copied, so decoded pixels are identical). Baseline lets the loader decode only the
  // rows a crop needs; a progressive image must be entropy-decoded whole first.
  bool baseline = true;
  // Images: rewrite every JPEG (losslessly, as above) with a restart marker after each
  // MCU, so the loader entropy-decodes only the MCUs around a crop (docs/format.md,
  // "Restart layout"). Progressive JPEGs kept by `baseline = false` stay as they are.
  bool restart_markers = true;
  // Images: accept PNG, BMP and PPM sources by encoding them as JPEG at `quality`.
  bool reencode = false;
  int quality = 95;
  // Tokens: "auto", "jsonl", "megatron" or "llmc".
  std::string token_format = "auto";
  // Tokens (llm.c): the end-of-text id that separates documents.
  std::optional<uint32_t> eot;
  // Tokens: the vocabulary size to record (else one more than the largest id seen).
  std::optional<uint64_t> vocab_size;
  // Called from one thread as samples are written: (inputs done, inputs total).
  std::function<void(uint64_t, uint64_t)> progress;
};

struct SkippedInput {
  std::string source;
  std::string reason;
};

struct ConvertReport {
  std::filesystem::path out;
  std::string kind;
  std::string source_format;
  uint64_t inputs = 0;
  uint64_t samples = 0;
  uint64_t payload_bytes = 0;
  size_t shards = 0;
  std::vector<SkippedInput> skipped;
  std::vector<std::string> warnings;
  uint64_t rewritten_as_baseline = 0;
  uint64_t with_restart_markers = 0;  // JPEGs stored with the restart layout
  // Motion-JPEG frames stored with the standard Huffman tables they left out written in
  // (loader/jpeg_default_tables.h).
  uint64_t with_default_huffman_tables = 0;
  double seconds = 0;
};

ConvertReport convert_images(const std::filesystem::path& src, const std::filesystem::path& out,
                             const ConvertOptions& options);
ConvertReport convert_tokens(const std::filesystem::path& src, const std::filesystem::path& out,
                             const ConvertOptions& options);

}  // namespace evenfeed
