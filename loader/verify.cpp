#include "loader/verify.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/checksum.h"
#include "core/error.h"
#include "loader/dataset.h"
#include "loader/jpeg_probe.h"
#include "loader/shard_reader.h"

namespace evenfeed {
namespace {

struct SampleChecker {
  const Dataset& dataset;
  bool decode;
  std::unique_ptr<Dataset::ReadSession> session;
  std::unique_ptr<TjHandle> decompressor;
  std::vector<unsigned char> pixels;

  SampleChecker(const Dataset& d, bool dec) : dataset(d), decode(dec) {
    session = std::make_unique<Dataset::ReadSession>(d);
  }

  // The problem with sample `id`, or nothing.
  std::optional<std::string> check(uint64_t id) {
    RecordView view;
    std::optional<std::string> problem;
    try {
      problem = dataset.try_read(*session, id, /*verify_checksum=*/true, view);
    } catch (const Error& e) {
      problem = e.what();
    }
    if (problem || !decode || view.header.kind != RecordKind::kJpeg) return problem;
    if (!decompressor) decompressor = std::make_unique<TjHandle>(TjHandle::Mode::kDecompress);
    JpegInfo info;
    if (auto bad = probe_jpeg(*decompressor, view.payload, true, info, pixels)) return bad;
    const IndexEntry entry = dataset.index().entry(id);
    if (static_cast<uint32_t>(info.width) != entry.width ||
        static_cast<uint32_t>(info.height) != entry.height) {
      return fmt::format("JPEG is {}x{} but the index says {}x{}", info.width, info.height,
                         entry.width, entry.height);
    }
    return std::nullopt;
  }
};

BadSample bad(const Dataset& d, uint64_t id, std::string problem) {
  return {id, d.manifest().shards[d.shard_of(id)].file, std::string(d.index().source_name(id)),
          std::move(problem)};
}

// Scans a shard whose file checksum failed in a child process: LMDB trusts its
// B-tree pages, so a flipped bit there could crash us. The child reports one line per
// bad sample and a final "done"; if it dies, the samples it did not reach are bad.
void scan_damaged_shard(const Dataset& dataset, uint32_t shard, bool decode,
                        std::vector<BadSample>& out) {
  const ShardEntry& entry = dataset.manifest().shards[shard];
  int fds[2];
  if (::pipe(fds) != 0) fail_errno("pipe", entry.file, errno);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork", entry.file, errno);
  if (pid == 0) {
    ::close(fds[0]);
    FILE* w = ::fdopen(fds[1], "w");
    // LMDB environments must not be used across fork(): the child opens its own.
    Dataset own(dataset.dir());
    SampleChecker checker(own, decode);
    for (uint64_t id = entry.first_id; id < entry.first_id + entry.count; ++id) {
      auto problem = checker.check(id);
      std::fprintf(w, "%llu\t%s\n", static_cast<unsigned long long>(id),
                   problem ? problem->c_str() : "");
      std::fflush(w);
    }
    std::fprintf(w, "done\n");
    std::fclose(w);
    ::_exit(0);
  }
  ::close(fds[1]);
  FILE* r = ::fdopen(fds[0], "r");
  uint64_t reached = entry.first_id;
  bool done = false;
  char* line = nullptr;
  size_t cap = 0;
  while (::getline(&line, &cap, r) > 0) {
    std::string text(line);
    if (text == "done\n") {
      done = true;
      break;
    }
    size_t tab = text.find('\t');
    uint64_t id = std::stoull(text.substr(0, tab));
    std::string problem = text.substr(tab + 1, text.size() - tab - 2);
    if (!problem.empty()) out.push_back(bad(dataset, id, problem));
    reached = id + 1;
  }
  std::free(line);
  std::fclose(r);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!done) {
    for (uint64_t id = reached; id < entry.first_id + entry.count; ++id) {
      out.push_back(bad(dataset, id,
                        fmt::format("unreadable: reading the damaged shard crashed (signal {})",
                                    WIFSIGNALED(status) ? WTERMSIG(status) : 0)));
    }
  }
}

enum class ShardState { kHealthy, kDamaged, kUnreadable };

// What the whole-file checks found of each shard, and the problem line of each that is
// not healthy.
struct ShardChecks {
  std::vector<ShardState> state;
  std::vector<std::string> problem;
};

// 1. Whole files against the manifest: the index's checksum, each shard's size,
// checksum and record count.
ShardChecks check_files(const Dataset& dataset, const std::filesystem::path& dir,
                        tbb::task_arena& arena, VerifyReport& report) {
  const Manifest& m = dataset.manifest();
  if (file_checksum64(dir / m.index.file) != m.index.checksum) {
    report.file_problems.push_back(
        fmt::format("{}: checksum mismatch (the index was changed)", m.index.file));
  }
  ShardChecks checks{std::vector<ShardState>(m.shards.size(), ShardState::kHealthy),
                     std::vector<std::string>(m.shards.size())};
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, m.shards.size(), [&](size_t s) {
      const ShardEntry& e = m.shards[s];
      try {
        const ShardReader& reader = dataset.shard(static_cast<uint32_t>(s));  // checks the size
        if (file_checksum64(dir / e.file) != e.checksum) {
          checks.state[s] = ShardState::kDamaged;
          checks.problem[s] =
              fmt::format("{}: checksum mismatch (the file was changed or damaged)", e.file);
        } else if (reader.entries() != e.count) {
          checks.state[s] = ShardState::kDamaged;
          checks.problem[s] = fmt::format("{}: holds {} records but the manifest says {}", e.file,
                                          reader.entries(), e.count);
        }
      } catch (const Error& err) {
        checks.state[s] = ShardState::kUnreadable;
        checks.problem[s] = err.what();
      }
    });
  });
  return checks;
}

// 2. Every record of the healthy shards, in parallel, each thread with its own checker.
void check_records(const Dataset& dataset, const std::vector<ShardState>& state, bool decode,
                   tbb::task_arena& arena, VerifyReport& report) {
  std::mutex mutex;
  tbb::enumerable_thread_specific<std::unique_ptr<SampleChecker>> checkers;
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, dataset.manifest().num_samples, 256),
                      [&](const tbb::blocked_range<uint64_t>& r) {
                        auto& checker = checkers.local();
                        if (!checker) checker = std::make_unique<SampleChecker>(dataset, decode);
                        for (uint64_t id = r.begin(); id < r.end(); ++id) {
                          if (state[dataset.shard_of(id)] != ShardState::kHealthy) continue;
                          if (auto problem = checker->check(id)) {
                            std::lock_guard<std::mutex> lock(mutex);
                            report.bad_samples.push_back(bad(dataset, id, *problem));
                          }
                        }
                      });
  });
}

// 3. Damaged shards one by one, each in a child process; unreadable ones whole.
void check_unhealthy_shards(const Dataset& dataset, const ShardChecks& checks, bool decode,
                            VerifyReport& report) {
  const Manifest& m = dataset.manifest();
  for (size_t s = 0; s < m.shards.size(); ++s) {
    if (checks.state[s] == ShardState::kHealthy) continue;
    report.file_problems.push_back(checks.problem[s]);
    const ShardEntry& e = m.shards[s];
    if (checks.state[s] == ShardState::kDamaged) {
      scan_damaged_shard(dataset, static_cast<uint32_t>(s), decode, report.bad_samples);
    } else {
      for (uint64_t id = e.first_id; id < e.first_id + e.count; ++id) {
        report.bad_samples.push_back(bad(dataset, id, "unreadable: its shard cannot be opened"));
      }
    }
  }
}

}  // namespace

VerifyReport verify_dataset(const std::filesystem::path& dir, const VerifyOptions& options) {
  Dataset dataset(dir);
  VerifyReport report;
  report.num_samples = dataset.manifest().num_samples;
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);
  const ShardChecks checks = check_files(dataset, dir, arena, report);
  check_records(dataset, checks.state, options.decode, arena, report);
  check_unhealthy_shards(dataset, checks, options.decode, report);
  std::sort(report.bad_samples.begin(), report.bad_samples.end(),
            [](const BadSample& a, const BadSample& b) { return a.id < b.id; });
  report.samples_checked = report.num_samples;
  return report;
}

}  // namespace evenfeed
