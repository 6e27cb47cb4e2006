// convert tokens: JSON lines, Megatron-LM and llm.c inputs round-trip token for
// token; malformed inputs are named by file and line or sequence.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/dataset.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

std::vector<uint32_t> tokens_of(const Dataset& d, uint64_t id) {
  Dataset::ReadSession session(d);
  RecordView v = d.read(session, id, true);
  const size_t width = token_dtype_bytes(d.manifest().token_dtype);
  std::vector<uint32_t> out(v.header.length);
  for (size_t k = 0; k < out.size(); ++k) {
    uint32_t t = 0;
    std::memcpy(&t, v.payload.data() + k * width, width);
    out[k] = t;
  }
  return out;
}

template <typename T>
void append(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

ConvertOptions options() {
  ConvertOptions o;
  o.threads = 2;
  return o;
}

TEST(ConvertTokens, JsonLinesRoundTripWithLabelsAndNarrowIds) {
  testing::TempDir tmp;
  testing::write_text(
      tmp / "in.jsonl",
      "{\"tokens\":[1,2,3],\"label\":2}\n\n{\"tokens\":[65535],\"label\":0}\n{\"tokens\":[7,7]}\n");
  convert_tokens(tmp / "in.jsonl", tmp / "out", options());
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.manifest().token_dtype, TokenDtype::kUint16);
  EXPECT_EQ(d.manifest().vocab_size, 65536u);
  EXPECT_EQ(tokens_of(d, 0), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(tokens_of(d, 1), (std::vector<uint32_t>{65535}));
  EXPECT_EQ(d.index().labels()[0], 2);
  EXPECT_EQ(d.index().labels()[2], -1);
  EXPECT_EQ(d.index().lengths()[2], 2u);
  EXPECT_EQ(d.index().source_name(1), "in.jsonl:line 3");
}

TEST(ConvertTokens, JsonLinesMayNameTheArrayInputIds) {
  // As a Hugging Face tokeniser writes it; "tokens" wins when a line has both.
  testing::TempDir tmp;
  testing::write_text(tmp / "in.jsonl",
                      "{\"input_ids\":[5,6],\"attention_mask\":[1,1],\"label\":1}\n"
                      "{\"tokens\":[7],\"input_ids\":[8,9]}\n");
  convert_tokens(tmp / "in.jsonl", tmp / "out", options());
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(tokens_of(d, 0), (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(tokens_of(d, 1), (std::vector<uint32_t>{7}));
  EXPECT_EQ(d.index().labels()[0], 1);
}

TEST(ConvertTokens, WideIdsSelectUint32) {
  testing::TempDir tmp;
  testing::write_text(tmp / "in.jsonl", "{\"tokens\":[65536, 4000000000]}\n");
  convert_tokens(tmp / "in.jsonl", tmp / "out", options());
  Dataset d(tmp / "out");
  EXPECT_EQ(d.manifest().token_dtype, TokenDtype::kUint32);
  EXPECT_EQ(tokens_of(d, 0), (std::vector<uint32_t>{65536, 4000000000u}));
}

TEST(ConvertTokens, BadJsonLinesAreNamedAndSkippable) {
  testing::TempDir tmp;
  testing::write_text(
      tmp / "in.jsonl",
      "{\"tokens\":[1]}\nnot json\n{\"text\":\"x\"}\n{\"tokens\":[-1]}\n{\"tokens\":[]}\n"
      "{\"tokens\":[1],\"label\":\"cat\"}\n");
  try {
    convert_tokens(tmp / "in.jsonl", tmp / "out", options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in.jsonl:line 2: not a JSON object"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "out"));
  ConvertOptions o = options();
  o.on_error = OnError::kSkip;
  ConvertReport r = convert_tokens(tmp / "in.jsonl", tmp / "out", o);
  EXPECT_EQ(r.samples, 1u);
  ASSERT_EQ(r.skipped.size(), 5u);
  EXPECT_NE(r.skipped[1].reason.find("\"tokens\""), std::string::npos);
  EXPECT_NE(r.skipped[2].reason.find("-1"), std::string::npos);
  EXPECT_NE(r.skipped[3].reason.find("empty"), std::string::npos);
  EXPECT_NE(r.skipped[4].reason.find("label"), std::string::npos);
}

TEST(ConvertTokens, VocabSizeIsEnforced) {
  testing::TempDir tmp;
  testing::write_text(tmp / "in.jsonl", "{\"tokens\":[1,200]}\n");
  ConvertOptions o = options();
  o.vocab_size = 100;
  EXPECT_THROW(convert_tokens(tmp / "in.jsonl", tmp / "out", o), Error);
}

// Writes a Megatron-LM pair with the given dtype code and sequences.
void write_megatron(const fs::path& prefix, uint8_t code,
                    const std::vector<std::vector<int64_t>>& seqs) {
  const size_t width = code == 4 ? 4 : 2;
  std::string bin, idx = std::string("MMIDIDX\0\0", 9);
  std::vector<int64_t> pointers;
  for (const auto& s : seqs) {
    pointers.push_back(static_cast<int64_t>(bin.size()));
    for (int64_t t : s) {
      if (width == 2)
        append<uint16_t>(bin, static_cast<uint16_t>(t));
      else
        append<int32_t>(bin, static_cast<int32_t>(t));
    }
  }
  append<uint64_t>(idx, 1);
  append<uint8_t>(idx, code);
  append<uint64_t>(idx, seqs.size());
  append<uint64_t>(idx, seqs.size() + 1);
  for (const auto& s : seqs) append<int32_t>(idx, static_cast<int32_t>(s.size()));
  for (int64_t p : pointers) append<int64_t>(idx, p);
  for (size_t d = 0; d <= seqs.size(); ++d) append<int64_t>(idx, static_cast<int64_t>(d));
  testing::write_text(fs::path(prefix).replace_extension(".bin"), bin);
  testing::write_text(fs::path(prefix).replace_extension(".idx"), idx);
}

TEST(ConvertTokens, MegatronSequencesRoundTrip) {
  for (uint8_t code : {uint8_t{8}, uint8_t{4}}) {
    testing::TempDir tmp;
    write_megatron(tmp / "corpus.bin", code, {{5, 6, 7}, {9}, {1, 2, 3, 4, 70}});
    ConvertReport r = convert_tokens(tmp / "corpus.bin", tmp / "out", options());
    EXPECT_EQ(r.source_format, "megatron");
    Dataset d(tmp / "out");
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(tokens_of(d, 2), (std::vector<uint32_t>{1, 2, 3, 4, 70}));
    EXPECT_EQ(d.index().source_name(1), "corpus.bin:sequence 1");
  }
}

TEST(ConvertTokens, TruncatedMegatronDataIsRefused) {
  testing::TempDir tmp;
  write_megatron(tmp / "corpus.bin", 8, {{5, 6, 7}, {9, 10}});
  fs::resize_file(tmp / "corpus.bin", 6);
  try {
    convert_tokens(tmp / "corpus.idx", tmp / "out", options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sequence 1"), std::string::npos) << e.what();
  }
}

void write_llmc(const fs::path& path, const std::vector<uint16_t>& tokens) {
  std::string data(1024, '\0');
  int32_t header[3] = {20240520, 1, static_cast<int32_t>(tokens.size())};
  std::memcpy(data.data(), header, sizeof(header));
  for (uint16_t t : tokens) append<uint16_t>(data, t);
  testing::write_text(path, data);
}

TEST(ConvertTokens, LlmcDocumentsSplitAtEndOfText) {
  testing::TempDir tmp;
  const uint16_t eot = 50256;
  write_llmc(tmp / "shard.bin", {eot, 10, 11, eot, eot, 12, eot, 13, 14, 15});
  ConvertOptions o = options();
  EXPECT_THROW(convert_tokens(tmp / "shard.bin", tmp / "out", o), Error);  // --eot is required
  o.eot = eot;
  convert_tokens(tmp / "shard.bin", tmp / "out", o);
  Dataset d(tmp / "out");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(tokens_of(d, 0), (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(tokens_of(d, 1), (std::vector<uint32_t>{12}));
  EXPECT_EQ(tokens_of(d, 2), (std::vector<uint32_t>{13, 14, 15}));
  EXPECT_EQ(d.index().source_name(2), "shard.bin:document 2");
}

TEST(ConvertTokens, TruncatedLlmcFileIsRefused) {
  testing::TempDir tmp;
  write_llmc(tmp / "shard.bin", {1, 2, 3, 4});
  fs::resize_file(tmp / "shard.bin", 1024 + 5);
  ConvertOptions o = options();
  o.eot = 0;
  try {
    convert_tokens(tmp / "shard.bin", tmp / "out", o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace evenfeed
