// What a plan is made of, for the plain sampler and the length-bucketing planner
// alike: steps, each with one batch per rank, and the state that resumes an epoch.
//
// A planner is a pure function of (dataset lengths, options, seed, epoch, history):
// every rank runs the same one and takes its own slice, so ranks never talk to agree
// on the plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evenfeed {

struct RankBatch {
  std::vector<uint64_t> samples;
  // One flag per slot when some slots are padding (false = padding, not a real sample
  // to count); empty when every slot is real.
  std::vector<uint8_t> valid;

  bool slot_valid(size_t i) const { return valid.empty() || valid[i] != 0; }
  size_t real_count() const;
};

using StepBatches = std::vector<RankBatch>;  // one batch per rank

struct PlanStep {
  uint32_t epoch = 0;
  uint64_t step = 0;  // index within the epoch, counting every segment
  uint32_t world_size = 0;
  std::vector<RankBatch> ranks;  // exactly world_size batches; some may be empty
};

// A run of steps served at one world size.
struct Segment {
  uint32_t world_size = 0;
  uint64_t steps = 0;
};

// Where an epoch stands: a few integers. `served` lists the steps already served and
// at which world size (one entry, or more after resumes at other world sizes).
struct PlanState {
  uint64_t seed = 0;
  uint32_t epoch = 0;
  std::vector<Segment> served;

  uint64_t steps_served() const;
  // The world size the epoch started at: the first segment's, or `now` when none was
  // served yet.
  uint32_t world_size_at_start(uint32_t now) const {
    return served.empty() ? now : served.front().world_size;
  }
  // Records that `steps` more steps were served at `world_size`.
  void advance(uint32_t world_size, uint64_t steps);
  std::string to_json() const;
  static PlanState from_json(const std::string& text);
};

class StepPlanner {
 public:
  virtual ~StepPlanner() = default;
  // The next step to serve at the planner's world size; false when the epoch is done.
  virtual bool next(PlanStep& step) = 0;
};

// Checks the arguments every planner shares; throws Error with a clear message.
void check_world(uint32_t world_size, uint64_t num_samples);

}  // namespace evenfeed
