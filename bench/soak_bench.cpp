// The soak run (issue 7): many epochs over a small dataset, as a long training job
// reads it, with the process's resident memory, open file descriptors and threads
// sampled after every epoch. All three must stay flat: a loader that leaks a slot, a
// transaction, a file handle or a thread per epoch shows here within minutes, not
// after a week. A benchmark, not a test: it takes as long as you give it.
//
//   evenfeed_bench_soak DATASET [--epochs N] [--batch-size B] [--threads T] [--size S]
//                        [--substitute]
// Prints a JSON line every tenth of the run and a summary line at the end.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

#include "loader/dataset.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"

namespace {

struct Sample {
  double rss_mib = 0;
  long fds = 0, threads = 0;
};

long count_fds() {
  long n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n - 3;  // ".", ".." and the directory's own descriptor
}

Sample sample_process() {
  Sample s;
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:" && status >> value) s.rss_mib = static_cast<double>(value) / 1024.0;
    if (key == "Threads:" && status >> value) s.threads = value;
  }
  s.fds = count_fds();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s DATASET [--epochs N] [--batch-size B] [--threads T] "
                 "[--size S] [--substitute]\n",
                 argv[0]);
    return 2;
  }
  uint32_t epochs = 200;
  evenfeed::SamplerOptions sampler;
  evenfeed::LoaderOptions options;
  options.image.size = 64;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "0";
    if (flag == "--epochs")
      epochs = static_cast<uint32_t>(std::atoi(value)), ++i;
    else if (flag == "--batch-size")
      sampler.batch_size = std::strtoull(value, nullptr, 10), ++i;
    else if (flag == "--threads")
      options.threads = std::atoi(value), ++i;
    else if (flag == "--size")
      options.image.size = std::atoi(value), ++i;
    else if (flag == "--substitute")
      options.on_bad = evenfeed::BadRecordPolicy::kSubstitute;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    evenfeed::Dataset dataset(argv[1]);
    const auto start = std::chrono::steady_clock::now();
    Sample first, last, peak;
    uint64_t samples = 0;
    for (uint32_t epoch = 0; epoch < epochs; ++epoch) {
      evenfeed::DistributedSampler plan(dataset.size(), 1, sampler, {1, epoch, {}});
      evenfeed::Loader loader(dataset, options, epoch, evenfeed::batches_of_rank(plan, 0));
      while (auto batch = loader.next()) samples += batch->size();
      last = sample_process();
      if (epoch == 0) first = last;
      peak.rss_mib = std::max(peak.rss_mib, last.rss_mib);
      peak.fds = std::max(peak.fds, last.fds);
      peak.threads = std::max(peak.threads, last.threads);
      if (epochs < 10 || (epoch + 1) % (epochs / 10) == 0)
        std::printf("{\"epoch\": %u, \"rss_mib\": %.1f, \"fds\": %ld, \"threads\": %ld}\n",
                    epoch + 1, last.rss_mib, last.fds, last.threads);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "{\"epochs\": %u, \"samples\": %llu, \"seconds\": %.1f, \"rss_mib_after_first_epoch\": "
        "%.1f, \"rss_mib_at_end\": %.1f, \"rss_mib_peak\": %.1f, \"fds_first\": %ld, "
        "\"fds_end\": %ld, \"fds_peak\": %ld, \"threads_first\": %ld, \"threads_end\": %ld}\n",
        epochs, static_cast<unsigned long long>(samples), seconds, first.rss_mib, last.rss_mib,
        peak.rss_mib, first.fds, last.fds, peak.fds, first.threads, last.threads);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: error: %s\n", e.what());
    return 1;
  }
}
