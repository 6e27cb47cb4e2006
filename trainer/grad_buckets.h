// DDP's gradient buckets: the flat gradient buffer cut into buckets from its end (the
// last layers, whose gradients backward finishes first), a small first bucket so
// communication starts early, then ~25 MB ones. As backward announces finished
// gradients, every bucket it completes is all-reduced at once, in the same fixed order
// on every rank, so communication overlaps the rest of backward. finish() waits for
// them all and measures only the time this rank was actually blocked (exposed).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <vector>

#include "trainer/communicator.h"

namespace evenfeed {

struct BucketOptions {
  size_t bucket_bytes = 25u << 20;       // PyTorch DDP's default bucket_cap_mb
  size_t first_bucket_bytes = 1u << 20;  // ... and its small first bucket
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class GradBuckets {
 public:
  GradBuckets(std::span<float> grads, const BucketOptions& options, Communicator& comm);

  size_t bucket_count() const { return bounds_.size(); }
  // [begin, end) of bucket i; bucket 0 ends at the buffer's end.
  std::pair<size_t, size_t> bucket(size_t i) const { return bounds_[i]; }

  // Starts a backward pass; `communicate` false for accumulation micro-steps (no_sync).
  void begin(bool communicate);
  // Backward has finished gradients [begin, size): launch every bucket now complete.
  void ready_from(size_t begin);
  // Launches what is left and waits for all; returns seconds spent blocked.
  double finish();
  // For the last finish(): seconds during which at least one bucket was being
  // reduced (the communication time that exposed time is a part of).
  double communicated() const { return communicated_; }
  uint64_t launched_total() const { return launched_total_; }

 private:
  std::span<float> grads_;
  BucketOptions options_;
  Communicator& comm_;
  std::vector<std::pair<size_t, size_t>> bounds_;
  std::vector<std::unique_ptr<Work>> in_flight_;
  size_t next_ = 0;
  bool communicate_ = false;
  uint64_t launched_total_ = 0;
  double communicated_ = 0;
};

}  // namespace evenfeed
