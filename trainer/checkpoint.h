// Checkpoint files (format: docs/checkpoint.md): metadata JSON plus float32 arrays,
// with a checksum, written atomically so a crash never leaves a half-written file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

namespace evenfeed {

struct Checkpoint {
  nlohmann::json meta;
  std::vector<std::vector<float>> arrays;  // parameters, then optimiser state
};

void write_checkpoint(const std::filesystem::path& file, const Checkpoint& checkpoint);
// Throws Error naming the file for anything missing, truncated or damaged.
Checkpoint read_checkpoint(const std::filesystem::path& file);

}  // namespace evenfeed
