// The code of docs/embedding.md: each function is one snippet of the guide, compiled
// by every build and run by the tests (docs_snippets), so the guide cannot rot.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "loader/dataset.h"
#include "sampler/plan.h"

namespace snippets {

void open_dataset(const std::filesystem::path& dir);
std::unique_ptr<evenfeed::StepPlanner> plan_epoch(const evenfeed::Dataset& dataset, uint32_t world,
                                                  const evenfeed::PlanState& state);
// The sample ids this rank is served in epoch `state.epoch`, from where `state` stands.
std::vector<uint64_t> load_epoch(const evenfeed::Dataset& dataset, uint32_t rank, uint32_t world,
                                 evenfeed::PlanState state, uint64_t stop_after_steps);
std::string save_state(const evenfeed::PlanState& state);
evenfeed::PlanState restore_state(const std::string& text);
// Data parallel: returns the global mean of a per-sample value over every rank's epoch.
double ddp_epoch(const evenfeed::Dataset& dataset, uint32_t epoch);
// Feeds one epoch's batches to the device (or passes them through); returns batches.
uint64_t feed_device(const evenfeed::Dataset& dataset);

}  // namespace snippets
