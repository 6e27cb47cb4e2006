// Records, manifest and index: each on-disk structure round-trips and each kind of
// damage is refused with a message that names it.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "loader/index.h"
#include "loader/manifest.h"
#include "loader/record.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

TEST(Record, RoundTripsHeaderAndPayload) {
  auto payload = bytes_of("hello payload");
  std::vector<std::byte> record;
  encode_record(RecordKind::kTokensU16, 42, 7, payload, record);
  ASSERT_EQ(record.size(), RecordHeader::kSize + payload.size());
  RecordHeader h;
  ASSERT_FALSE(decode_record_header(record, h).has_value());
  EXPECT_EQ(h.kind, RecordKind::kTokensU16);
  EXPECT_EQ(h.label, 42);
  EXPECT_EQ(h.length, 7u);
  EXPECT_EQ(h.payload_bytes, payload.size());
  EXPECT_EQ(0, std::memcmp(record.data() + RecordHeader::kSize, payload.data(), payload.size()));
}

TEST(Record, RefusesDamagedHeaders) {
  std::vector<std::byte> record;
  encode_record(RecordKind::kJpeg, 1, 1, bytes_of("abc"), record);
  RecordHeader h;
  auto bad_magic = record;
  bad_magic[0] = std::byte{'X'};
  EXPECT_NE(decode_record_header(bad_magic, h).value_or("").find("magic"), std::string::npos);
  auto bad_version = record;
  bad_version[4] = std::byte{9};
  EXPECT_NE(decode_record_header(bad_version, h).value_or("").find("version"), std::string::npos);
  auto bad_kind = record;
  bad_kind[6] = std::byte{7};
  EXPECT_NE(decode_record_header(bad_kind, h).value_or("").find("kind"), std::string::npos);
  auto short_record = record;
  short_record.pop_back();
  EXPECT_NE(decode_record_header(short_record, h).value_or("").find("payload bytes"),
            std::string::npos);
  std::vector<std::byte> tiny(10);
  EXPECT_TRUE(decode_record_header(tiny, h).has_value());
}

Manifest sample_manifest() {
  Manifest m;
  m.kind = DatasetKind::kTokens;
  m.token_dtype = TokenDtype::kUint32;
  m.vocab_size = 70000;
  m.num_samples = 5;
  m.total_bytes = 100;
  m.index = {"index.bin", 10, 0x0123456789abcdefULL};
  m.shards = {{"shard-00000.lmdb", 0, 3, 4096, 60, 1}, {"shard-00001.lmdb", 3, 2, 4096, 40, 2}};
  m.source_path = "/src";
  m.source_format = "jsonl";
  return m;
}

TEST(Manifest, RoundTrips) {
  Manifest m = sample_manifest();
  Manifest back = Manifest::from_json(m.to_json(), "test");
  EXPECT_EQ(back.kind, DatasetKind::kTokens);
  EXPECT_EQ(back.token_dtype, TokenDtype::kUint32);
  EXPECT_EQ(back.vocab_size, 70000u);
  ASSERT_EQ(back.shards.size(), 2u);
  EXPECT_EQ(back.shards[1].first_id, 3u);
  EXPECT_EQ(back.shards[1].checksum, 2u);
  EXPECT_EQ(back.index.checksum, 0x0123456789abcdefULL);
}

void expect_refused(const std::string& json, const std::string& words) {
  try {
    Manifest::from_json(json, "m.json");
    FAIL() << "accepted: " << json;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Manifest, RefusesInconsistentOrForeignManifests) {
  std::string good = sample_manifest().to_json();
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_refused("not json", "not a JSON object");
  expect_refused(replaced("\"format_version\": 1", "\"format_version\": 2"), "format_version 2");
  expect_refused(replaced("\"first_id\": 3", "\"first_id\": 4"), "starts at id 4");
  expect_refused(replaced("\"num_samples\": 5", "\"num_samples\": 6"), "num_samples is 6");
  expect_refused(replaced("\"shard-00001.lmdb\"", "\"../etc/passwd\""), "not a plain file name");
  expect_refused(replaced("\"kind\": \"tokens\"", "\"kind\": \"audio\""), "unknown kind");
}

TEST(Index, RoundTripsForEmptyOddAndEvenCounts) {
  for (int n : {0, 1, 2, 5}) {
    testing::TempDir tmp;
    IndexWriter writer;
    for (int i = 0; i < n; ++i) {
      writer.add({static_cast<uint64_t>(i * 100), i - 1, static_cast<uint32_t>(i),
                  static_cast<uint32_t>(2 * i)},
                 "src/" + std::to_string(i));
    }
    writer.write(tmp / "index.bin");
    IndexReader reader(tmp / "index.bin");
    ASSERT_EQ(reader.size(), static_cast<uint64_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(reader.lengths()[i], static_cast<uint64_t>(i * 100));
      EXPECT_EQ(reader.labels()[i], i - 1);
      EXPECT_EQ(reader.widths()[i], static_cast<uint32_t>(i));
      EXPECT_EQ(reader.heights()[i], static_cast<uint32_t>(2 * i));
      EXPECT_EQ(reader.source_name(i), "src/" + std::to_string(i));
    }
  }
}

TEST(Index, RefusesTruncatedOrForeignFiles) {
  testing::TempDir tmp;
  IndexWriter writer;
  writer.add({1, 0, 1, 1}, "a");
  writer.add({2, 0, 1, 2}, "b");
  writer.write(tmp / "index.bin");
  fs::resize_file(tmp / "index.bin", fs::file_size(tmp / "index.bin") - 1);
  EXPECT_THROW(IndexReader(tmp / "index.bin"), Error);
  testing::write_text(tmp / "other.bin",
                      "definitely not an index, but long enough to have a header.......");
  EXPECT_THROW(IndexReader(tmp / "other.bin"), Error);
  EXPECT_THROW(IndexReader(tmp / "missing.bin"), Error);
}

}  // namespace
}  // namespace evenfeed
