// Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/seed-*):
// small, valid inputs of each kind the parsers accept, made with the real writers.
//   make_seeds CORPUS_DIR       (build target fuzz_make_seeds; rerun when formats change)
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "loader/convert.h"
#include "loader/jpeg_restart.h"
#include "loader/record.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"
#include "trainer/checkpoint.h"

namespace fs = std::filesystem;
using evenfeed::testing::make_jpeg;
using evenfeed::testing::write_file;
using evenfeed::testing::write_text;

namespace {

template <typename T>
void append(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

void record_seeds(const fs::path& dir) {
  std::vector<std::byte> record;
  auto jpeg = make_jpeg({.width = 32, .height = 24});
  evenfeed::encode_record(evenfeed::RecordKind::kJpeg, 3, jpeg.size(), jpeg, record);
  write_file(dir / "seed-jpeg", record);
  std::string tokens;
  for (uint16_t t : {5, 6, 7, 8}) append(tokens, t);
  evenfeed::encode_record(evenfeed::RecordKind::kTokensU16, 1, 4, bytes_of(tokens), record);
  write_file(dir / "seed-tokens", record);
}

// The fuzz_jpeg input: six bytes choosing crop and output size, then the JPEG.
void write_jpeg_seed(const fs::path& path, uint8_t prefix, const std::vector<std::byte>& jpeg) {
  std::vector<std::byte> input(6 + jpeg.size());
  const uint8_t choice[6] = {prefix, 40, 200, 180, 1, 16};
  std::memcpy(input.data(), choice, 6);
  std::memcpy(input.data() + 6, jpeg.data(), jpeg.size());
  write_file(path, input);
}

void jpeg_seeds(const fs::path& dir) {
  const std::vector<std::pair<std::string, evenfeed::testing::JpegSpec>> kinds = {
      {"420", {.width = 40, .height = 30}},
      {"444", {.width = 33, .height = 17, .subsampling = TJSAMP_444}},
      {"422-progressive",
       {.width = 48, .height = 40, .subsampling = TJSAMP_422, .progressive = true}},
      {"grey", {.width = 24, .height = 24, .subsampling = TJSAMP_GRAY, .pixel_format = TJPF_GRAY}},
      {"cmyk", {.width = 20, .height = 28, .subsampling = TJSAMP_444, .pixel_format = TJPF_CMYK}},
  };
  uint8_t prefix = 0;
  evenfeed::JpegTranscoder restarts;
  for (const auto& [name, spec] : kinds) {
    auto jpeg = make_jpeg(spec);
    // Each kind as made, and as convert stores it: a restart marker after every MCU,
    // which the loader cuts into a window of the crop's MCUs.
    std::vector<std::byte> restarted;
    if (restarts.rewrite(jpeg, true, restarted)) std::abort();
    write_jpeg_seed(dir / ("seed-" + name), prefix, jpeg);
    write_jpeg_seed(dir / ("seed-" + name + "-restart"), prefix, restarted);
    prefix = static_cast<uint8_t>(prefix + 30);
  }
  // A Motion-JPEG frame: no Huffman tables, which convert writes in.
  write_jpeg_seed(dir / "seed-420-motion-jpeg", prefix,
                  evenfeed::testing::drop_jpeg_segments(make_jpeg(kinds[0].second), 0xC4));
}

void token_seeds(const fs::path& dir) {
  write_text(dir / "seed-jsonl",
             std::string(1, '\0') + "{\"tokens\": [1, 2, 3], \"label\": 1}\n{\"tokens\": [4]}\n");
  std::string bin, idx = std::string("MMIDIDX\0\0", 9);
  append<uint64_t>(idx, 1);
  append<uint8_t>(idx, 8);  // uint16 tokens
  append<uint64_t>(idx, 2);
  append<uint64_t>(idx, 3);
  for (int32_t n : {3, 1}) append(idx, n);
  for (int64_t p : {0, 6}) append(idx, p);
  for (int64_t d : {0, 1, 2}) append(idx, d);
  for (uint16_t t : {5, 6, 7, 9}) append(bin, t);
  std::string megatron(1, '\1');
  append<uint32_t>(megatron, static_cast<uint32_t>(idx.size()));
  write_text(dir / "seed-megatron", megatron + idx + bin);
  std::string llmc(1, '\2');
  std::string body(1024, '\0');
  int32_t header[3] = {20240520, 1, 6};
  std::memcpy(body.data(), header, sizeof(header));
  for (uint16_t t : {50256, 10, 11, 50256, 12, 13}) append(body, t);
  write_text(dir / "seed-llmc", llmc + body);
}

void dataset_seeds(const fs::path& corpus) {
  evenfeed::testing::TempDir tmp;
  evenfeed::testing::make_image_tree(tmp / "src", 2, 3);
  evenfeed::convert_images(tmp / "src", tmp / "images", {});
  write_text(tmp / "t.jsonl", "{\"tokens\": [1, 2, 3], \"label\": 0}\n{\"tokens\": [7, 8]}\n");
  evenfeed::convert_tokens(tmp / "t.jsonl", tmp / "tokens", {});
  for (const char* kind : {"images", "tokens"}) {
    fs::copy_file(tmp / kind / "evenfeed.json", corpus / "manifest" / (std::string("seed-") + kind),
                  fs::copy_options::overwrite_existing);
    fs::copy_file(tmp / kind / "index.bin", corpus / "index" / (std::string("seed-") + kind),
                  fs::copy_options::overwrite_existing);
  }
}

void reencode_seeds(const fs::path& dir) {
  write_file(dir / "seed-png", evenfeed::testing::make_png(12, 9, 3));
  std::string ppm = "P6\n4 3\n255\n";
  for (int i = 0; i < 4 * 3 * 3; ++i) ppm.push_back(static_cast<char>(i * 7));
  write_text(dir / "seed-ppm", ppm);
}

void checkpoint_seeds(const fs::path& dir) {
  evenfeed::Checkpoint c;
  c.meta = {{"version", 1},
            {"step", 3},
            {"plan", {{"seed", 1}, {"epoch", 0}, {"served", nlohmann::json::array()}}}};
  c.arrays = {{1.0f, -2.0f, 0.5f}, {}, {0.25f}};
  evenfeed::write_checkpoint(dir / "seed-small", c);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  for (const char* t : {"record", "manifest", "index", "jpeg", "tokens", "reencode", "checkpoint"})
    fs::create_directories(corpus / t);
  record_seeds(corpus / "record");
  jpeg_seeds(corpus / "jpeg");
  token_seeds(corpus / "tokens");
  dataset_seeds(corpus);
  reencode_seeds(corpus / "reencode");
  checkpoint_seeds(corpus / "checkpoint");
  std::printf("seeds written to %s\n", corpus.c_str());
  return 0;
}
