#include "loader/dataset_writer.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <fstream>

#include "core/checksum.h"
#include "core/error.h"
#include "loader/shard_writer.h"

namespace evenfeed {
namespace {
// Records per LMDB transaction, and bytes: bounds the writer's dirty pages in memory.
constexpr size_t kBatchRecords = 256;
constexpr uint64_t kBatchBytes = uint64_t{64} << 20;
}  // namespace

std::string shard_file_name(size_t shard) {
  return fmt::format("shard-{:05d}.lmdb", shard);
}

DatasetWriter::DatasetWriter(std::filesystem::path out, DatasetWriterOptions options)
    : options_(std::move(options)), staging_(std::move(out), options_.replace_existing) {
  EVENFEED_CHECK(options_.samples_per_shard > 0, "samples per shard must be positive");
  manifest_.kind = options_.kind;
  manifest_.token_dtype = options_.token_dtype;
  manifest_.vocab_size = options_.vocab_size;
  manifest_.classes = options_.classes;
  manifest_.source_path = options_.source_path;
  manifest_.source_format = options_.source_format;
  manifest_.created_by = "evenfeed " EVENFEED_VERSION;
}

DatasetWriter::~DatasetWriter() = default;

void DatasetWriter::add(PreparedSample&& sample, std::string_view source_name) {
  if (!shard_) {
    ShardEntry entry;
    entry.file = shard_file_name(manifest_.shards.size());
    entry.first_id = index_.size();
    manifest_.shards.push_back(entry);
    shard_ = std::make_unique<ShardWriter>(staging_.path() / entry.file);
    pending_first_id_ = entry.first_id;
  }
  const uint64_t payload = sample.record.size() - RecordHeader::kSize;
  manifest_.shards.back().payload_bytes += payload;
  manifest_.shards.back().count += 1;
  manifest_.total_bytes += payload;
  pending_bytes_ += sample.record.size();
  pending_.push_back(std::move(sample.record));
  index_.add(sample.entry, source_name);
  if (pending_.size() >= kBatchRecords || pending_bytes_ >= kBatchBytes) flush_pending();
  if (manifest_.shards.back().count == options_.samples_per_shard) finish_shard();
}

void DatasetWriter::flush_pending() {
  if (pending_.empty()) return;
  shard_->append(pending_first_id_, pending_);
  pending_first_id_ += pending_.size();
  pending_.clear();
  pending_bytes_ = 0;
}

void DatasetWriter::finish_shard() {
  flush_pending();
  manifest_.shards.back().bytes = shard_->finish();
  shard_.reset();
}

Manifest DatasetWriter::commit() {
  if (shard_) finish_shard();
  manifest_.num_samples = index_.size();
  manifest_.index.file = IndexReader::kFileName;
  const std::filesystem::path index_path = staging_.path() / manifest_.index.file;
  index_.write(index_path);
  manifest_.index.bytes = std::filesystem::file_size(index_path);
  manifest_.index.checksum = file_checksum64(index_path);
  tbb::parallel_for(size_t{0}, manifest_.shards.size(), [&](size_t i) {
    manifest_.shards[i].checksum = file_checksum64(staging_.path() / manifest_.shards[i].file);
  });
  const std::filesystem::path manifest_path = staging_.path() / Manifest::kFileName;
  {
    std::ofstream out(manifest_path);
    out << manifest_.to_json();
    out.flush();
    if (!out) fail_errno("write", manifest_path.string(), errno);
  }
  staging_.commit();
  return manifest_;
}

}  // namespace evenfeed
