#include "loader/dataset.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checksum.h"
#include "core/error.h"
#include "loader/shard_reader.h"

namespace evenfeed {

Dataset::Dataset(std::filesystem::path dir, ReadEnv& env) : dir_(std::move(dir)), env_(env) {
  manifest_ = Manifest::load(dir_);
  index_ = std::make_unique<IndexReader>(dir_ / manifest_.index.file);
  EVENFEED_CHECK(index_->size() == manifest_.num_samples,
                 "{}: index holds {} samples but the manifest says {}; re-convert the dataset",
                 (dir_ / manifest_.index.file).string(), index_->size(), manifest_.num_samples);
  shards_ = std::make_unique<ShardSlot[]>(manifest_.shards.size());
}

Dataset::~Dataset() = default;

uint32_t Dataset::shard_of(uint64_t id) const {
  EVENFEED_CHECK(id < manifest_.num_samples, "sample id {} is out of range: {} holds {} samples",
                 id, dir_.string(), manifest_.num_samples);
  const auto& shards = manifest_.shards;
  auto it = std::upper_bound(shards.begin(), shards.end(), id,
                             [](uint64_t v, const ShardEntry& s) { return v < s.first_id; });
  return static_cast<uint32_t>(std::distance(shards.begin(), it) - 1);
}

const ShardReader& Dataset::shard(uint32_t shard) const {
  ShardSlot& slot = shards_[shard];
  std::call_once(slot.once, [&] {
    const ShardEntry& entry = manifest_.shards[shard];
    try {
      slot.reader = std::make_unique<ShardReader>(dir_ / entry.file, entry.bytes);
      slot.opened.store(true, std::memory_order_release);
    } catch (const Error& e) {
      slot.error = e.what();
    }
  });
  if (!slot.reader) throw Error(slot.error);
  return *slot.reader;
}

void Dataset::release_resident_pages() const {
  for (size_t s = 0; s < manifest_.shards.size(); ++s) {
    ShardSlot& slot = shards_[s];
    // Only shards already opened (the flag is set after the reader is complete).
    if (slot.opened.load(std::memory_order_acquire)) slot.reader->release_resident_pages();
  }
  index_->release_resident_pages();
}

void Dataset::release_record_pages(const RecordView& view, bool with_root) const {
  if (view.payload.data() == nullptr) return;  // nothing was read
  const ShardReader& reader = shard(view.shard);
  const std::byte* record = view.payload.data() - RecordHeader::kSize;
  const size_t bytes = view.payload.size() + RecordHeader::kSize;
  reader.release_around(record, bytes);
  // Small records live in their leaf page: one release then covers both.
  const std::byte* leaf = view.leaf;
  if (leaf != nullptr && !reader.same_neighbourhood(leaf, record, bytes)) {
    reader.release_around(leaf, 1);
  }
  const std::byte* root = with_root ? reader.root_page() : nullptr;
  if (root != nullptr && !reader.same_neighbourhood(root, record, bytes) &&
      (leaf == nullptr || !reader.same_neighbourhood(root, leaf, 1))) {
    reader.release_around(root, 1);
  }
}

RecordKind Dataset::expected_record_kind() const {
  if (manifest_.kind == DatasetKind::kImage) return RecordKind::kJpeg;
  return manifest_.token_dtype == TokenDtype::kUint16 ? RecordKind::kTokensU16
                                                      : RecordKind::kTokensU32;
}

std::string Dataset::describe(uint64_t id) const {
  if (id >= manifest_.num_samples) return fmt::format("sample {}", id);
  return fmt::format("sample {} ({}, source {})", id, manifest_.shards[shard_of(id)].file,
                     index_->source_name(id));
}

Dataset::ReadSession::ReadSession(const Dataset& dataset)
    : dataset_(dataset), open_(dataset.manifest_.shards.size()) {}

Dataset::ReadSession::~ReadSession() {
  for (Open& open : open_) {
    if (open.cursor != nullptr) mdb_cursor_close(open.cursor);
    if (open.txn != nullptr) mdb_txn_abort(open.txn);
  }
}

MDB_cursor* Dataset::ReadSession::cursor(uint32_t shard) {
  Open& open = open_[shard];
  if (open.cursor == nullptr) {
    const ShardReader& reader = dataset_.shard(shard);
    if (open.txn == nullptr) open.txn = reader.begin_read();
    open.cursor = reader.open_cursor(open.txn);
  }
  return open.cursor;
}

std::optional<std::string> Dataset::try_read(ReadSession& session, uint64_t id,
                                             bool verify_checksum, RecordView& out) const {
  out.id = id;
  out.shard = shard_of(id);
  const StoredRecord stored = env_.read_record(shard(out.shard), session.cursor(out.shard), id);
  const std::span<const std::byte> value = stored.bytes;
  if (value.empty()) return std::string("record is missing from its shard");
  out.leaf = stored.leaf;
  if (auto problem = decode_record_header(value, out.header)) return problem;
  out.payload = value.subspan(RecordHeader::kSize);
  if (out.header.kind != expected_record_kind()) {
    return fmt::format("record kind {} does not match the dataset ({})",
                       record_kind_name(out.header.kind), record_kind_name(expected_record_kind()));
  }
  const IndexEntry entry = index_->entry(id);
  if (out.header.length != entry.length || out.header.label != entry.label) {
    return fmt::format("record says length {} label {} but the index says length {} label {}",
                       out.header.length, out.header.label, entry.length, entry.label);
  }
  if (out.header.kind != RecordKind::kJpeg) {
    size_t width = out.header.kind == RecordKind::kTokensU16 ? 2 : 4;
    if (out.header.payload_bytes != out.header.length * width) {
      return fmt::format("token record holds {} bytes, not {} tokens of {} bytes",
                         out.header.payload_bytes, out.header.length, width);
    }
  }
  if (verify_checksum && checksum64(out.payload) != out.header.checksum) {
    return std::string("payload checksum mismatch (the record's bytes were changed)");
  }
  return std::nullopt;
}

RecordView Dataset::read(ReadSession& session, uint64_t id, bool verify_checksum) const {
  RecordView view;
  std::optional<std::string> problem;
  try {
    problem = try_read(session, id, verify_checksum, view);
  } catch (const Error& e) {
    problem = e.what();
  }
  if (problem) fail("{}: {}; run `evenfeed verify {}`", describe(id), *problem, dir_.string());
  return view;
}

}  // namespace evenfeed
