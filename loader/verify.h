// `evenfeed verify`: checks a dataset end to end — manifest against files, each file's
// checksum, every record header and payload checksum, and optionally that every JPEG
// decodes — and names each bad sample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evenfeed {

struct VerifyOptions {
  bool decode = false;  // also decode every JPEG and compare its size with the index
  int threads = 0;      // 0: every core
};

struct BadSample {
  uint64_t id = 0;
  std::string shard;
  std::string source;
  std::string problem;
};

struct VerifyReport {
  uint64_t num_samples = 0;
  uint64_t samples_checked = 0;
  std::vector<std::string> file_problems;  // one line per damaged or missing file
  std::vector<BadSample> bad_samples;      // in id order
  bool ok() const { return file_problems.empty() && bad_samples.empty(); }
};

// Throws Error only when the dataset cannot be opened at all (no manifest, damaged
// index); every other problem is reported.
VerifyReport verify_dataset(const std::filesystem::path& dir, const VerifyOptions& options);

}  // namespace evenfeed
