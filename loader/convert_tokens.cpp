// convert_tokens: JSON lines, Megatron-LM and llm.c token files into a token dataset.
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/convert_pipeline.h"
#include "loader/record.h"
#include "loader/token_sources.h"

namespace evenfeed {
namespace {

// The vocabulary size when not given: one more than the largest id of any readable
// document. A parallel pass over the inputs; documents with problems are left for the
// main pass to report.
uint64_t scan_vocab_size(const TokenSource& source, int threads) {
  tbb::enumerable_thread_specific<std::vector<uint32_t>> buffers;
  tbb::task_arena arena(threads);
  uint64_t max_id = 0;
  arena.execute([&] {
    max_id = tbb::parallel_reduce(
        tbb::blocked_range<uint64_t>(0, source.size(), 64), uint64_t{0},
        [&](const tbb::blocked_range<uint64_t>& r, uint64_t best) {
          auto& tokens = buffers.local();
          int32_t label;
          for (uint64_t i = r.begin(); i < r.end(); ++i) {
            if (source.read(i, tokens, label)) continue;
            for (uint32_t t : tokens) best = std::max<uint64_t>(best, t);
          }
          return best;
        },
        [](uint64_t a, uint64_t b) { return std::max(a, b); });
  });
  return max_id + 1;
}

void pack_tokens(const std::vector<uint32_t>& tokens, TokenDtype dtype,
                 std::vector<std::byte>& out) {
  const size_t width = token_dtype_bytes(dtype);
  out.resize(tokens.size() * width);
  if (dtype == TokenDtype::kUint32) {
    std::memcpy(out.data(), tokens.data(), out.size());
    return;
  }
  for (size_t k = 0; k < tokens.size(); ++k) {
    uint16_t v = static_cast<uint16_t>(tokens[k]);
    std::memcpy(out.data() + 2 * k, &v, 2);
  }
}

}  // namespace

ConvertReport convert_tokens(const std::filesystem::path& src, const std::filesystem::path& out,
                             const ConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<TokenSource> source = open_token_source(src, options.token_format, options.eot);
  EVENFEED_CHECK(source->size() > 0, "{}: no documents found", src.string());
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  const uint64_t vocab =
      options.vocab_size ? *options.vocab_size : scan_vocab_size(*source, threads);
  EVENFEED_CHECK(vocab > 0 && vocab <= uint64_t{UINT32_MAX} + 1, "--vocab-size {} is out of range",
                 vocab);
  const TokenDtype dtype = vocab <= 65536 ? TokenDtype::kUint16 : TokenDtype::kUint32;
  const RecordKind kind =
      dtype == TokenDtype::kUint16 ? RecordKind::kTokensU16 : RecordKind::kTokensU32;

  ConvertReport report;
  report.out = out;
  report.kind = "tokens";
  report.source_format = source->format();
  DatasetWriterOptions writer_options;
  writer_options.kind = DatasetKind::kTokens;
  writer_options.token_dtype = dtype;
  writer_options.vocab_size = vocab;
  writer_options.source_path = std::filesystem::absolute(src).string();
  writer_options.source_format = source->format();
  writer_options.samples_per_shard =
      samples_per_shard(source->size(), source->input_bytes(), options.shards);
  writer_options.replace_existing = options.force;
  DatasetWriter writer(out, writer_options);

  struct Scratch {
    std::vector<uint32_t> tokens;
    std::vector<std::byte> payload;
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  auto prepare = [&](uint64_t i, PreparedSample& sample) -> std::optional<std::string> {
    Scratch& s = scratch.local();
    int32_t label = -1;
    if (auto problem = source->read(i, s.tokens, label)) return problem;
    auto too_big =
        std::find_if(s.tokens.begin(), s.tokens.end(), [&](uint32_t t) { return t >= vocab; });
    if (too_big != s.tokens.end()) {
      return fmt::format("token id {} is not below the vocabulary size {}", *too_big, vocab);
    }
    pack_tokens(s.tokens, dtype, s.payload);
    const uint64_t n = s.tokens.size();
    encode_record(kind, label, n, s.payload, sample.record);
    sample.entry = {n, label, static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX)), 1};
    return std::nullopt;
  };
  auto source_name = [&](uint64_t i) { return source->source_name(i); };
  run_conversion(source->size(), prepare, source_name, writer, options, report);
  commit_conversion(writer, src, "documents", start, report);
  return report;
}

}  // namespace evenfeed
