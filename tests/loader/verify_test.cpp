// verify: a clean dataset passes; flipped bits, truncated, missing and scrambled
// shards and undecodable JPEGs are each found and named by sample, never crash.
#include "loader/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "loader/convert.h"
#include "loader/dataset.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::make_image_tree(tmp_ / "src", 2, 6);  // 12 images
    ConvertOptions o;
    o.shards = 2;
    o.threads = 2;
    o.restart_markers = false;  // stored as the sources are, so their bytes can be found
    convert_images(tmp_ / "src", out(), o);
  }
  fs::path out() const { return tmp_ / "out"; }
  fs::path shard(int i) const { return out() / (i == 0 ? "shard-00000.lmdb" : "shard-00001.lmdb"); }

  // Flips one byte of sample `id`'s payload inside its shard file.
  void flip_payload_byte(uint64_t id) {
    Dataset d(out());
    auto source = testing::read_file(tmp_ / "src" / std::string(d.index().source_name(id)));
    auto file = testing::read_file(shard(static_cast<int>(d.shard_of(id))));
    auto at = std::search(file.begin(), file.end(), source.begin() + source.size() / 2,
                          source.begin() + source.size() / 2 + 32);
    ASSERT_NE(at, file.end());
    std::fstream f(shard(static_cast<int>(d.shard_of(id))),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at - file.begin() + 5);
    char c = static_cast<char>(static_cast<unsigned char>(*(at + 5)) ^ 0x04);
    f.write(&c, 1);
  }

  testing::TempDir tmp_;
};

TEST_F(VerifyTest, CleanDatasetPasses) {
  VerifyReport r = verify_dataset(out(), {.decode = true, .threads = 2});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.samples_checked, 12u);
}

TEST_F(VerifyTest, FlippedPayloadBitNamesExactlyThatSample) {
  flip_payload_byte(8);
  VerifyReport r = verify_dataset(out(), {});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.bad_samples.size(), 1u);
  EXPECT_EQ(r.bad_samples[0].id, 8u);
  EXPECT_EQ(r.bad_samples[0].shard, "shard-00001.lmdb");
  EXPECT_EQ(r.bad_samples[0].source, "class1/img2.jpg");
  EXPECT_NE(r.bad_samples[0].problem.find("checksum"), std::string::npos);
  ASSERT_EQ(r.file_problems.size(), 1u);
  EXPECT_NE(r.file_problems[0].find("shard-00001.lmdb"), std::string::npos);
}

TEST_F(VerifyTest, TruncatedShardMarksItsSamplesOnly) {
  fs::resize_file(shard(0), fs::file_size(shard(0)) / 2);
  VerifyReport r = verify_dataset(out(), {});
  ASSERT_EQ(r.bad_samples.size(), 6u);
  for (const BadSample& b : r.bad_samples) {
    EXPECT_LT(b.id, 6u);
    EXPECT_EQ(b.shard, "shard-00000.lmdb");
  }
  ASSERT_EQ(r.file_problems.size(), 1u);
  EXPECT_NE(r.file_problems[0].find("truncated"), std::string::npos) << r.file_problems[0];
}

TEST_F(VerifyTest, MissingShardIsNamed) {
  fs::remove(shard(1));
  VerifyReport r = verify_dataset(out(), {});
  EXPECT_EQ(r.bad_samples.size(), 6u);
  ASSERT_EQ(r.file_problems.size(), 1u);
  EXPECT_NE(r.file_problems[0].find("missing"), std::string::npos) << r.file_problems[0];
}

TEST_F(VerifyTest, ScrambledLmdbPagesDoNotCrashVerify) {
  // Overwrite everything after the two meta pages: branch and leaf pages included.
  const auto size = fs::file_size(shard(0));
  {
    std::fstream f(shard(0), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8192);
    for (uint64_t k = 8192; k < size; ++k) f.put(static_cast<char>((k * 2654435761u) >> 13));
  }
  VerifyReport r = verify_dataset(out(), {});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.bad_samples.size(), 6u);
  for (const BadSample& b : r.bad_samples) EXPECT_LT(b.id, 6u);
}

TEST_F(VerifyTest, DamagedIndexIsAnError) {
  fs::resize_file(out() / "index.bin", 10);
  EXPECT_THROW(verify_dataset(out(), {}), Error);
}

TEST(Verify, DecodeFindsJpegsWhoseDataIsDamaged) {
  testing::TempDir tmp;
  auto jpeg = testing::make_jpeg({.width = 160, .height = 120});
  testing::write_file(tmp / "src" / "c" / "good.jpg", jpeg);
  for (size_t k = jpeg.size() / 3; k < jpeg.size() / 3 + 64; ++k)
    jpeg[k] = std::byte{static_cast<unsigned char>(k * 151)};
  testing::write_file(tmp / "src" / "c" / "zbad.jpg", jpeg);
  ConvertOptions o;
  o.check_decode = false;  // let the damaged JPEG in
  convert_images(tmp / "src", tmp / "out", o);
  EXPECT_TRUE(verify_dataset(tmp / "out", {}).ok());  // records and checksums are fine
  VerifyReport r = verify_dataset(tmp / "out", {.decode = true});
  ASSERT_EQ(r.bad_samples.size(), 1u);
  EXPECT_EQ(r.bad_samples[0].source, "c/zbad.jpg");
  EXPECT_NE(r.bad_samples[0].problem.find("JPEG"), std::string::npos);
}

}  // namespace
}  // namespace evenfeed
