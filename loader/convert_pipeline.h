// The pipeline shared by image and token conversion: inputs are prepared in parallel
// (read, check, encode) and written strictly in input order, with a bounded number of
// chunks in flight so memory stays flat whatever the input size.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "loader/convert.h"
#include "loader/dataset_writer.h"

namespace evenfeed {

// Prepares input i into `sample`; returns why it cannot be stored, or nothing.
using PrepareFn = std::function<std::optional<std::string>(uint64_t i, PreparedSample& sample)>;
// The source name of input i, as stored in the index and shown in messages.
using SourceNameFn = std::function<std::string(uint64_t i)>;

// Runs the conversion of inputs [0, count) into `writer`, honouring on_error, the
// thread count, interrupts and progress; fills samples and skipped in `report`.
void run_conversion(uint64_t count, const PrepareFn& prepare, const SourceNameFn& source_name,
                    DatasetWriter& writer, const ConvertOptions& options, ConvertReport& report);

// Ends a conversion: fails (leaving nothing behind) when no input could be stored,
// otherwise commits the dataset and fills the report's sizes and time. `noun` names the
// inputs in the error ("inputs", "documents").
void commit_conversion(DatasetWriter& writer, const std::filesystem::path& src, const char* noun,
                       std::chrono::steady_clock::time_point start, ConvertReport& report);

// Samples per shard for `count` inputs of `total_bytes` under options.shards.
uint64_t samples_per_shard(uint64_t count, uint64_t total_bytes, int shards);

}  // namespace evenfeed
