// Releasing a read's mapped pages (ShardReader::release_around, Dataset::
// release_record_pages). A fault on a file mapping maps the whole page-cache folio
// around the page (up to 2 MiB on Linux 6.x), so a loader that dropped only the pages
// it touched kept most of each folio mapped, and its resident memory grew with the
// dataset. These tests read which pages are mapped from /proc/self/pagemap (bit 63:
// present) and check that after a release nothing is left around the record, its
// B-tree leaf or the root, whatever the folio sizes in the page cache are.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "loader/convert.h"
#include "loader/dataset.h"
#include "loader/shard_reader.h"
#include "loader/shard_writer.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// Whether the virtual page holding `p` is mapped; nullopt when pagemap is unreadable.
std::optional<bool> page_mapped(const void* p) {
  static const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / kPage * sizeof(entry));
  if (::pread(fd, &entry, sizeof(entry), at) != sizeof(entry)) return std::nullopt;
  return (entry >> 63) != 0;
}

// Pages of `map` mapped within the folio-span neighbourhood of `where`.
size_t mapped_pages_around(std::span<const std::byte> map, const std::byte* where) {
  const size_t span = ShardReader::folio_span();
  const size_t first = static_cast<size_t>(where - map.data()) / span * span;
  const size_t end = std::min(map.size(), first + span);
  size_t mapped = 0;
  for (size_t offset = first; offset < end; offset += kPage)
    mapped += *page_mapped(map.data() + offset) ? 1 : 0;
  return mapped;
}

class PageRelease : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!page_mapped(&kPage)) GTEST_SKIP() << "/proc/self/pagemap is not readable here";
    // 200 noisy 320x240 pictures at quality 95, 30-50 KB each: the shard spans several
    // folio-sized neighbourhoods, and its B-tree has a branch root above its leaves
    // (an LMDB leaf holds about 150 keys of records this big).
    for (int i = 0; i < 200; ++i) {
      testing::JpegSpec spec;
      spec.width = 320;
      spec.height = 240;
      spec.quality = 95;
      spec.seed = static_cast<uint64_t>(i + 1);
      testing::write_file(tmp_ / "src" / (i % 2 ? "a" : "b") / fmt::format("{:03}.jpg", i),
                          testing::make_jpeg(spec));
    }
    ConvertOptions options;
    options.shards = 1;
    convert_images(tmp_ / "src", tmp_ / "data", options);
  }
  testing::TempDir tmp_;
};

TEST_F(PageRelease, TheRootIsFoundAndTheLeafIsTheRecordsKey) {
  Dataset dataset(tmp_ / "data");
  const ShardReader& reader = dataset.shard(0);
  const std::span<const std::byte> map = reader.map();
  ASSERT_FALSE(map.empty());
  ASSERT_NE(reader.root_page(), nullptr) << "LMDB's meta page was not understood";
  // LMDB's pages are the system's. An LMDB page starts with its own page number, then padding and
  // flags (1: branch, 2: leaf).
  uint64_t pgno = 0;
  uint16_t flags = 0;
  std::memcpy(&pgno, reader.root_page(), sizeof(pgno));
  std::memcpy(&flags, reader.root_page() + 10, sizeof(flags));
  EXPECT_EQ(pgno, static_cast<uint64_t>(reader.root_page() - map.data()) / kPage);
  EXPECT_EQ(flags, 1) << "the root should be a branch page";

  Dataset::ReadSession session(dataset);
  for (uint64_t id = 0; id < dataset.size(); ++id) {
    RecordView view = dataset.read(session, id);
    ASSERT_GE(view.leaf, map.data());
    ASSERT_LT(view.leaf + 8, map.data() + map.size());
    unsigned char key[8];
    encode_sample_key(id, key);
    EXPECT_EQ(std::memcmp(view.leaf, key, 8), 0) << "sample " << id;
  }
}

TEST_F(PageRelease, NothingAroundARecordItsLeafOrTheRootStaysMapped) {
  Dataset dataset(tmp_ / "data");
  const ShardReader& reader = dataset.shard(0);
  const std::span<const std::byte> map = reader.map();
  ASSERT_GT(map.size(), 2 * ShardReader::folio_span()) << "the shard is too small to tell";
  Dataset::ReadSession session(dataset);
  for (uint64_t id = 0; id < dataset.size(); ++id) {
    RecordView view = dataset.read(session, id);
    unsigned sum = 0;  // touch every page of the payload, as a decoder does
    for (size_t k = 0; k < view.payload.size(); k += kPage)
      sum += static_cast<unsigned>(view.payload[k]);
    ASSERT_GT(mapped_pages_around(map, view.payload.data()), 0u) << sum;
    ASSERT_GT(mapped_pages_around(map, view.leaf), 0u);
    dataset.release_record_pages(view);
    EXPECT_EQ(mapped_pages_around(map, view.payload.data()), 0u) << "sample " << id;
    EXPECT_EQ(mapped_pages_around(map, view.payload.data() + view.payload.size() - 1), 0u);
    EXPECT_EQ(mapped_pages_around(map, view.leaf), 0u) << "sample " << id;
    EXPECT_EQ(mapped_pages_around(map, reader.root_page()), 0u) << "sample " << id;
  }
}

TEST_F(PageRelease, BytesOutsideTheMapAreLeftAlone) {
  Dataset dataset(tmp_ / "data");
  const ShardReader& reader = dataset.shard(0);
  std::vector<std::byte> copy(3 * kPage, std::byte{7});
  reader.release_around(copy.data(), copy.size());  // must not drop the heap's pages
  EXPECT_EQ(copy[kPage], std::byte{7});
  EXPECT_TRUE(*page_mapped(copy.data() + kPage));
}

}  // namespace
}  // namespace evenfeed
