// `evenfeed plan`: plans E epochs with our planner and the baselines, in the same run,
// and reports the figures side by side; optionally dumps our plan as JSON lines and
// plans epoch 0 as a run interrupted at step K and resumed at another world size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/length_source.h"
#include "sampler/distributed_sampler.h"

namespace evenfeed::cli {

struct PlanRequest {
  uint32_t world_size = 8;
  bool bucketing = true;  // token budgets; false: the plain sampler with a fixed batch size
  BucketingOptions bucketing_options;
  SamplerOptions sampler_options;
  uint64_t seed = 0;
  uint32_t epochs = 2;
  std::optional<uint64_t> resume_at_step;
  std::optional<uint32_t> resume_world_size;
  bool baselines = true;
  uint64_t baseline_batch_size = 0;  // 0: tokens_per_rank / mean length
  std::filesystem::path dump;        // empty: no dump
};

nlohmann::json run_plan_report(const LengthSource& lengths, const PlanRequest& request);

// One positive integer per line; throws Error naming the line of a bad value.
std::vector<uint64_t> read_lengths_file(const std::filesystem::path& path);

}  // namespace evenfeed::cli
