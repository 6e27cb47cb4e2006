#include "trainer/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/checksum.h"
#include "core/error.h"
#include "core/mapped_file.h"

namespace evenfeed {
namespace {

constexpr char kMagic[8] = {'E', 'V', 'F', 'C', 'K', 'P', 'T', '1'};

void append(std::string& out, const void* data, size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}

void append_u64(std::string& out, uint64_t value) {
  append(out, &value, sizeof(value));
}

void write_all(int fd, const std::string& bytes, const std::filesystem::path& where) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("writing the checkpoint", where.string(), errno);
    done += static_cast<size_t>(n);
  }
}

// Reads little-endian fields from the file's bytes, failing clearly past the end.
struct Reader {
  std::span<const std::byte> bytes;
  size_t at = 0;
  const std::filesystem::path& file;
  void take(void* out, size_t n) {
    if (bytes.size() - at < n)
      fail(
          "{}: checkpoint is truncated at byte {}; it was not written completely, use an older one",
          file.string(), at);
    if (n > 0) std::memcpy(out, bytes.data() + at, n);  // out may be null when n is 0
    at += n;
  }
  uint64_t u64() {
    uint64_t v = 0;
    take(&v, sizeof(v));
    return v;
  }
};

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const Checkpoint& checkpoint) {
  std::string bytes;
  append(bytes, kMagic, sizeof(kMagic));
  const std::string meta = checkpoint.meta.dump();
  append_u64(bytes, meta.size());
  bytes += meta;
  append_u64(bytes, checkpoint.arrays.size());
  for (const auto& array : checkpoint.arrays) {
    append_u64(bytes, array.size());
    append(bytes, array.data(), array.size() * sizeof(float));
  }
  append_u64(bytes, checksum64(std::as_bytes(std::span(bytes.data(), bytes.size()))));

  const std::filesystem::path temp = file.string() + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("creating the checkpoint", temp.string(), errno);
  try {
    write_all(fd, bytes, temp);
    if (::fsync(fd) != 0) fail_errno("flushing the checkpoint", temp.string(), errno);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    fail_errno("moving the checkpoint into place", file.string(), error);
  }
  const int dir =
      ::open(file.parent_path().empty() ? "." : file.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

Checkpoint read_checkpoint(const std::filesystem::path& file) {
  std::vector<std::byte> bytes;
  if (auto problem = read_whole_file(file, bytes))
    fail("{}: cannot read the checkpoint: {}", file.string(), *problem);
  EVENFEED_CHECK(
      bytes.size() >= sizeof(kMagic) + 8 && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0,
      "{}: not an evenfeed checkpoint (bad magic); pass the file `evenfeed train` wrote",
      file.string());
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  EVENFEED_CHECK(stored == checksum64(std::span(bytes.data(), bytes.size() - 8)),
                 "{}: checkpoint checksum mismatch (damaged or truncated); use an older checkpoint",
                 file.string());
  Reader in{std::span(bytes.data(), bytes.size() - 8), sizeof(kMagic), file};
  const uint64_t meta_bytes = in.u64();
  std::string meta(std::min<uint64_t>(meta_bytes, bytes.size()), '\0');
  in.take(meta.data(), meta.size());
  Checkpoint checkpoint;
  try {
    checkpoint.meta = nlohmann::json::parse(meta);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: checkpoint metadata is not valid JSON: {}", file.string(), e.what());
  }
  const uint64_t arrays = in.u64();
  EVENFEED_CHECK(arrays <= 16, "{}: checkpoint claims {} arrays; it is damaged", file.string(),
                 arrays);
  for (uint64_t a = 0; a < arrays; ++a) {
    const uint64_t count = in.u64();
    EVENFEED_CHECK(count <= bytes.size() / sizeof(float), "{}: checkpoint array {} is truncated",
                   file.string(), a);
    std::vector<float>& array = checkpoint.arrays.emplace_back(count);
    in.take(array.data(), count * sizeof(float));
  }
  return checkpoint;
}

}  // namespace evenfeed
