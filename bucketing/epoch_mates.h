// Last epoch's batch of every sample, which the next epoch's deal steers away from.
//
// Dealing a window's samples among its batches (batch_dealing.h) makes batch mates a
// random draw, but on a small corpus a long sample fits only the few batches whose
// longest is longer, and so do its mates: Python and C sources at 16,384 tokens under
// the quadratic model, 8 ranks, still re-batched 10.3% of their pairs next epoch. Told
// each sample's batch in the previous epoch, the deal takes, of a few places drawn, one
// whose batch holds none (or fewest) of its former mates: 6.5%, with every batch's
// cost, the padding and the balance exactly as before.
//
// Knowing the previous epoch's batches means planning it, with its own previous epoch:
// a chain back to epoch 0. EpochMatesChain keeps the latest two links, so a run that
// plans its epochs in order plans each once more at most (none when the caller hands
// the served plan back with remember()), and a run resumed at epoch e plans epochs
// 0..e-1 once. Every link is planned at one world size, the one the epoch being planned starts
// at, so the reference is a pure function of the lengths, the options, the seed, the
// epoch and that world size, whatever sizes earlier runs had: a resumed run deals
// exactly as the uninterrupted one.
//
// A link holds 4 bytes per sample, so the chain is kept only up to
// kMostSamplesRemembered samples (16 MB). Larger datasets meet last epoch's mates only
// when two samples fall in one window again (window / dataset), rarely, and their plan
// memory stays O(window).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bucketing/bucketing_options.h"
#include "bucketing/length_source.h"
#include "sampler/plan.h"

namespace evenfeed {

inline constexpr uint64_t kMostSamplesRemembered = uint64_t{1} << 22;

// Whether the deal is steered at all: fresh_mates and mix_batches set, and at most
// kMostSamplesRemembered samples.
bool steers_from_previous_mates(const BucketingOptions& options, const LengthSource& lengths);

// Which batch of one epoch's plan each sample was in.
class EpochMates {
 public:
  explicit EpochMates(uint64_t samples);
  // Numbers each non-empty batch of `step` (steps in any order, each added once).
  void add(const PlanStep& step);
  // The sample's batch number, or DealSteer::kNoGroup when no added step held it.
  uint32_t batch_of(uint64_t id) const { return batch_[id]; }

 private:
  std::vector<uint32_t> batch_;
  uint32_t batches_ = 0;
};

class EpochMatesChain {
 public:
  // `options` as the planners get them (resolve_automatic applied); `lengths` must
  // outlive the chain.
  EpochMatesChain(const LengthSource& lengths, const BucketingOptions& options, uint64_t seed);

  // steers_from_previous_mates for its lengths and options.
  bool active() const { return active_; }
  // Epoch `epoch - 1`'s batches as planned at `world_size`; null for epoch 0 or when not
  // active. Plans the links it lacks (see above).
  std::shared_ptr<const EpochMates> previous(uint32_t epoch, uint32_t world_size);
  // Takes `epoch`'s batches from a caller that planned it whole at `world_size`, with
  // previous(epoch, world_size): the next epoch needs no replanning.
  void remember(uint32_t epoch, uint32_t world_size, std::shared_ptr<const EpochMates> mates);

 private:
  struct Link {
    uint32_t epoch;
    uint32_t world_size;
    std::shared_ptr<const EpochMates> mates;
  };
  static constexpr size_t kLinksKept = 2;

  const LengthSource& lengths_;
  BucketingOptions options_;
  uint64_t seed_;
  bool active_;
  std::vector<Link> links_;  // the latest last
};

}  // namespace evenfeed
