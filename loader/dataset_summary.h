// What `evenfeed inspect` reports about a dataset: sizes, label and length
// distributions, computed from the manifest and the index alone (no shard is read).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loader/dataset.h"

namespace evenfeed {

struct Percentiles {
  uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
};

struct DatasetSummary {
  std::string kind;
  uint64_t num_samples = 0;
  uint64_t num_shards = 0;
  uint64_t total_bytes = 0;  // payload bytes
  uint64_t file_bytes = 0;   // shards + index on disk
  std::map<int32_t, uint64_t> label_counts;
  std::vector<std::string> classes;
  Percentiles length;
  Percentiles width, height;  // images only
  std::string token_dtype;    // tokens only
  uint64_t vocab_size = 0;    // tokens only

  nlohmann::json to_json() const;
  std::string to_text() const;
};

DatasetSummary summarize(const Dataset& dataset);
Percentiles percentiles(std::vector<uint64_t> values);

// One sample in detail, for `inspect --sample ID`: index entry, record header, the
// checksum result, and for tokens the first ids.
nlohmann::json describe_sample(const Dataset& dataset, uint64_t id);

}  // namespace evenfeed
