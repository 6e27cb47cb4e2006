#include "loader/convert_pipeline.h"

#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/interrupt.h"

namespace evenfeed {
namespace {

constexpr uint64_t kChunk = 16;  // inputs per pipeline token
constexpr uint64_t kTargetShardBytes = uint64_t{256} << 20;

struct Chunk {
  uint64_t begin = 0, end = 0;
  std::vector<PreparedSample> samples;
  std::vector<std::optional<std::string>> problems;
};

}  // namespace

uint64_t samples_per_shard(uint64_t count, uint64_t total_bytes, int shards) {
  uint64_t n =
      shards > 0 ? static_cast<uint64_t>(shards)
                 : std::max<uint64_t>(1, (total_bytes + kTargetShardBytes - 1) / kTargetShardBytes);
  n = std::clamp<uint64_t>(n, 1, std::max<uint64_t>(count, 1));
  return std::max<uint64_t>(1, (count + n - 1) / n);
}

void run_conversion(uint64_t count, const PrepareFn& prepare, const SourceNameFn& source_name,
                    DatasetWriter& writer, const ConvertOptions& options, ConvertReport& report) {
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  // Chunks live in a fixed pool: with at most `tokens` in flight and in-order output,
  // slot (sequence % tokens) is free again by the time it is reused, and nothing leaks
  // when an error cancels the pipeline.
  const size_t tokens = static_cast<size_t>(threads) * 4;
  std::vector<Chunk> pool(tokens);
  uint64_t next = 0, sequence = 0;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> Chunk* {
                                         throw_if_interrupted("convert");
                                         if (next >= count) {
                                           fc.stop();
                                           return nullptr;
                                         }
                                         Chunk* chunk = &pool[sequence++ % tokens];
                                         chunk->begin = next;
                                         chunk->end = std::min(count, next + kChunk);
                                         next = chunk->end;
                                         return chunk;
                                       }) &
            tbb::make_filter<Chunk*, Chunk*>(tbb::filter_mode::parallel,
                                             [&](Chunk* chunk) {
                                               size_t n = chunk->end - chunk->begin;
                                               chunk->samples.resize(n);
                                               chunk->problems.resize(n);
                                               for (size_t k = 0; k < n; ++k) {
                                                 chunk->problems[k] =
                                                     prepare(chunk->begin + k, chunk->samples[k]);
                                               }
                                               return chunk;
                                             }) &
            tbb::make_filter<Chunk*, void>(tbb::filter_mode::serial_in_order, [&](Chunk* chunk) {
              for (size_t k = 0; k < chunk->samples.size(); ++k) {
                const uint64_t i = chunk->begin + k;
                if (chunk->problems[k]) {
                  if (options.on_error == OnError::kFail) {
                    fail("{}: {}; fix or remove it, or pass --on-error skip to leave it out",
                         source_name(i), *chunk->problems[k]);
                  }
                  report.skipped.push_back({source_name(i), *chunk->problems[k]});
                  continue;
                }
                writer.add(std::move(chunk->samples[k]), source_name(i));
              }
              if (options.progress) options.progress(chunk->end, count);
            }));
  });
  report.inputs = count;
  report.samples = writer.samples();
}

void commit_conversion(DatasetWriter& writer, const std::filesystem::path& src, const char* noun,
                       std::chrono::steady_clock::time_point start, ConvertReport& report) {
  EVENFEED_CHECK(writer.samples() > 0,
                 "{}: none of the {} {} could be stored (first problem: {}: {})", src.string(),
                 report.inputs, noun, report.skipped.front().source, report.skipped.front().reason);
  Manifest manifest = writer.commit();
  report.payload_bytes = manifest.total_bytes;
  report.shards = manifest.shards.size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace evenfeed
