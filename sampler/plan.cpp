#include "sampler/plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace evenfeed {

size_t RankBatch::real_count() const {
  if (valid.empty()) return samples.size();
  return static_cast<size_t>(std::count(valid.begin(), valid.end(), uint8_t{1}));
}

uint64_t PlanState::steps_served() const {
  uint64_t total = 0;
  for (const Segment& s : served) total += s.steps;
  return total;
}

void PlanState::advance(uint32_t world_size, uint64_t steps) {
  if (steps == 0) return;
  if (!served.empty() && served.back().world_size == world_size) {
    served.back().steps += steps;
  } else {
    served.push_back({world_size, steps});
  }
}

std::string PlanState::to_json() const {
  nlohmann::json j = {{"seed", seed}, {"epoch", epoch}, {"served", nlohmann::json::array()}};
  for (const Segment& s : served)
    j["served"].push_back({{"world_size", s.world_size}, {"steps", s.steps}});
  return j.dump();
}

PlanState PlanState::from_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EVENFEED_CHECK(j.is_object() && j.contains("seed") && j.contains("epoch") && j.contains("served"),
                 "sampler state is not valid JSON with seed, epoch and served");
  PlanState s;
  s.seed = j["seed"].get<uint64_t>();
  s.epoch = j["epoch"].get<uint32_t>();
  for (const auto& seg : j["served"])
    s.served.push_back({seg["world_size"].get<uint32_t>(), seg["steps"].get<uint64_t>()});
  return s;
}

void check_world(uint32_t world_size, uint64_t num_samples) {
  EVENFEED_CHECK(world_size > 0, "world size must be at least 1, got 0");
  EVENFEED_CHECK(num_samples > 0, "the dataset is empty: nothing to plan");
}

}  // namespace evenfeed
