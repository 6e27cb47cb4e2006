// The loader: turns a stream of batches of sample ids (this rank's share of a plan)
// into filled batches, in plan order, using every core.
//
//   Dataset dataset("data/");
//   LoaderOptions options;             // image size, layout, threads, prefetch, ...
//   Loader loader(dataset, options, epoch, batches_of_rank(planner, rank));
//   while (auto batch = loader.next()) { use(batch->images_uint8(), batch->labels()); }
//
// Each batch is one TBB task that decodes its samples with a parallel_for, so a single
// large batch still uses all cores. At most `prefetch` batches are in flight: each
// owns a slot from a fixed pool of page-aligned buffers, and a slot is reused only after
// the consumer drops the Batch holding it. This bounds memory and gives backpressure
// when the consumer is slow. No TBB worker ever blocks; a consumer waiting in next()
// works on the loader's tasks meanwhile (TBB's task_group::wait), so all `threads`
// threads decode while it waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/dataset.h"
#include "loader/image_transform.h"
#include "sampler/plan.h"

namespace evenfeed {

enum class AugmentMode { kTrain, kEval };
enum class BadRecordPolicy {
  kFail,        // a record that fails its checks or does not decode is an error naming it
  kSubstitute,  // it is replaced by a deterministic substitute (same shard when possible)
};

struct LoaderOptions {
  int threads = 0;    // TBB threads for this loader; 0: every core
  int prefetch = 4;   // batches in flight (slots in the pool)
  uint64_t seed = 0;  // crops and flips: (seed, epoch, sample id)
  AugmentMode mode = AugmentMode::kTrain;
  ImageOutput image;  // size and layout of image batches
  BadRecordPolicy on_bad = BadRecordPolicy::kFail;
  bool verify_checksums = false;  // check each payload's XXH3 as it is read
  // Token datasets: a sample longer than this keeps its first `max_tokens` tokens, as a
  // planner with OversizePolicy::kTruncate assumed (0: every sample whole).
  uint32_t max_tokens = 0;
  // Drop the dataset's mapped pages from this process (madvise DONTNEED) around each
  // sample once it is decoded or collated, and all of them after each batch: they stay
  // in the page cache, but the loader's resident memory is bounded by the samples in
  // flight, not by the dataset it has read. Off only to measure the difference.
  bool release_pages = true;
  // Batch slots in page-locked memory when a GPU is visible (cuda/pinned_memory.h), so
  // the device feeder's copies run asynchronously; ordinary memory otherwise.
  bool pin_memory = true;
};

// Yields this rank's next batch (sample ids, and validity flags when some slots are
// padding); false at the end of the epoch.
using BatchSource = std::function<bool(RankBatch& batch)>;

struct LoaderStats {
  uint64_t batches = 0, samples = 0, substituted = 0, bytes_read = 0;
  double read_seconds = 0, decode_seconds = 0, resize_seconds = 0,
         collate_seconds = 0;  // summed over threads
  double consumer_wait_seconds = 0;
  double mean_ready_batches = 0;  // batches already done when next() was called
};

class Loader;

// A filled batch. Move-only; its slot returns to the pool when it is destroyed.
class Batch {
 public:
  Batch(Batch&& other) noexcept;
  Batch& operator=(Batch&& other) noexcept;
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  uint64_t index() const;  // position in the epoch, 0-based
  size_t size() const;     // samples
  std::span<const uint64_t> sample_ids() const;
  // 1 for real samples, 0 for padding slots; empty when every slot is real.
  std::span<const uint8_t> valid() const;
  std::span<const int32_t> labels() const;
  // Image datasets: size() x S x S x 3 uint8, or size() x 3 x S x S float32.
  const uint8_t* images_uint8() const;
  const float* images_float() const;
  // Token datasets: size() x max_length() token ids (int32, zero padded), with each
  // sample's length and a mask (1 for real tokens).
  uint32_t max_length() const;
  std::span<const int32_t> tokens() const;
  std::span<const uint32_t> lengths() const;
  std::span<const uint8_t> mask() const;
  // Per sample, for checking against an independent decode: crop in source pixels.
  std::span<const CropBox> crops() const;
  // Samples replaced under BadRecordPolicy::kSubstitute: (position, original id).
  const std::vector<std::pair<size_t, uint64_t>>& substitutions() const;

 private:
  friend class Loader;
  struct Slot;
  Batch(Loader* loader, Slot* slot) : loader_(loader), slot_(slot) {}
  Loader* loader_ = nullptr;
  Slot* slot_ = nullptr;
};

class Loader {
 public:
  Loader(const Dataset& dataset, const LoaderOptions& options, uint32_t epoch, BatchSource source);
  ~Loader();  // waits for batches in flight; safe mid-epoch
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch in plan order, or nothing at the end of the epoch. Throws Error for
  // a bad record under kFail (naming the sample, its shard and source).
  std::optional<Batch> next();
  LoaderStats stats() const;

 private:
  friend class Batch;
  struct Impl;
  void release(Batch::Slot* slot);
  std::unique_ptr<Impl> impl_;
};

// The batches of `rank` from a planner, as a BatchSource. The planner must outlive it.
BatchSource batches_of_rank(StepPlanner& planner, uint32_t rank);

}  // namespace evenfeed
