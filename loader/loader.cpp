#include "loader/loader.h"

#include <stdlib.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>

#include "core/error.h"
#include "core/log.h"
#include "core/philox.h"
#include "cuda/pinned_memory.h"
#include "loader/jpeg_region_decoder.h"

namespace evenfeed {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kNoSubstitute = UINT64_MAX;
constexpr int kSubstituteTries = 16;

uint64_t nanoseconds_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

}  // namespace

struct Batch::Slot {
  explicit Slot(bool pin) : data(pin) {}
  uint64_t index = 0;
  RankBatch ids;
  std::vector<int32_t> labels;
  std::vector<CropBox> crops;
  std::vector<uint64_t> replaced;  // original id per position, or kNoSubstitute
  std::vector<std::pair<size_t, uint64_t>> substitutions;
  PinnedBuffer data;  // pinned when a GPU is visible, so its copy to the device is async
  std::vector<uint32_t> lengths;
  std::vector<uint8_t> mask;
  uint32_t max_length = 0;
  std::exception_ptr error;
  std::atomic<bool> ready{false};
  tbb::task_group group;  // the one task filling this slot
};

// Per-thread state: a read transaction per shard, a JPEG decoder, resize scratch.
struct Worker {
  Worker(const Dataset& d) : session(d) {}
  Dataset::ReadSession session;
  JpegRegionDecoder decoder;
  std::vector<uint8_t> scratch;
};

struct Loader::Impl {
  Impl(const Dataset& d, const LoaderOptions& o, uint32_t e, BatchSource s)
      : dataset(d),
        options(o),
        epoch(e),
        source(std::move(s)),
        // One slot is reserved for the consumer: it joins the work while it waits in
        // next(), so `threads` threads decode whenever the consumer is waiting, and
        // threads - 1 while it computes. No oversubscription, no idle waiting.
        arena(o.threads > 0 ? o.threads : tbb::info::default_concurrency(), 1),
        workers([&d] { return Worker(d); }) {}

  const Dataset& dataset;
  LoaderOptions options;
  uint32_t epoch;
  BatchSource source;
  tbb::task_arena arena;
  tbb::enumerable_thread_specific<Worker> workers;
  std::vector<std::unique_ptr<Batch::Slot>> slots;
  std::deque<Batch::Slot*> free_slots, in_order;
  uint64_t launched = 0;
  bool source_done = false, stopping = false;
  std::mutex mutex;  // guards the slot queues and the source
  // Statistics (nanoseconds summed over threads).
  std::atomic<uint64_t> read_ns{0}, decode_ns{0}, resize_ns{0}, collate_ns{0}, wait_ns{0};
  std::atomic<uint64_t> bytes_read{0}, substituted{0}, samples{0}, batches{0}, ready_sum{0},
      next_calls{0};

  void launch_more();  // mutex held
  void fill(Batch::Slot* slot);
  std::optional<std::string> load(Worker& w, Batch::Slot* slot, size_t i, uint64_t id);
  void load_or_substitute(Worker& w, Batch::Slot* slot, size_t i);
  void prepare_tokens(Batch::Slot* slot);
};

void Loader::Impl::launch_more() {
  while (!free_slots.empty() && !source_done && !stopping) {
    Batch::Slot* slot = free_slots.front();
    if (!source(slot->ids)) {
      source_done = true;
      break;
    }
    free_slots.pop_front();
    slot->index = launched++;
    slot->ready = false;
    slot->error = nullptr;
    in_order.push_back(slot);
    arena.execute([this, slot] { slot->group.run([this, slot] { fill(slot); }); });
  }
}

std::optional<std::string> Loader::Impl::load(Worker& w, Batch::Slot* slot, size_t i, uint64_t id) {
  auto start = Clock::now();
  RecordView view;
  std::optional<std::string> problem;
  try {
    problem = dataset.try_read(w.session, id, options.verify_checksums, view);
  } catch (const Error& e) {
    problem = e.what();
  }
  read_ns += nanoseconds_since(start);
  if (problem) return problem;
  bytes_read += view.payload.size();
  slot->labels[i] = view.header.label;
  if (view.header.kind != RecordKind::kJpeg) {
    start = Clock::now();
    // A substitute may be longer than the sample it replaces, and a sample longer than
    // max_tokens is planned as cut: either is cut to the batch's length, so the
    // batch's shape never changes.
    const uint32_t length =
        static_cast<uint32_t>(std::min<uint64_t>(view.header.length, slot->max_length));
    int32_t* row = reinterpret_cast<int32_t*>(slot->data.data()) + i * slot->max_length;
    const size_t width = view.header.kind == RecordKind::kTokensU16 ? 2 : 4;
    for (uint32_t k = 0; k < length; ++k) {
      uint32_t t = 0;
      std::memcpy(&t, view.payload.data() + k * width, width);
      row[k] = static_cast<int32_t>(t);
    }
    std::fill(row + length, row + slot->max_length, 0);
    slot->lengths[i] = length;
    uint8_t* mask = slot->mask.data() + i * slot->max_length;
    std::fill(mask, mask + length, uint8_t{1});
    std::fill(mask + length, mask + slot->max_length, uint8_t{0});
    collate_ns += nanoseconds_since(start);
    if (options.release_pages) dataset.release_record_pages(view, false);
    return std::nullopt;
  }
  const IndexEntry entry = dataset.index().entry(id);
  const int width = static_cast<int>(entry.width), height = static_cast<int>(entry.height);
  const CropBox chosen = options.mode == AugmentMode::kTrain
                             ? random_resized_crop(width, height, options.seed, epoch, id)
                             : center_crop(width, height);
  // On the grid of the DCT scale it will be decoded at, so the output is exactly a
  // resize of the crop the batch reports.
  const int size = options.image.size;
  const CropBox crop = snap_to_dct_grid(chosen, dct_denominator(chosen, size, size), width, height);
  slot->crops[i] = crop;
  start = Clock::now();
  DecodedRegion region;
  if (auto bad = w.decoder.decode(view.payload, crop, size, size, region)) return bad;
  decode_ns += nanoseconds_since(start);
  // The payload is decoded: drop its pages now, not only at the end of the batch.
  if (options.release_pages) dataset.release_record_pages(view);
  start = Clock::now();
  resize_and_store(region, crop.flip, options.image, w.scratch,
                   slot->data.data() + i * options.image.sample_bytes());
  resize_ns += nanoseconds_since(start);
  return std::nullopt;
}

// Loads sample i; a bad record either fails the batch or is replaced by a substitute
// drawn deterministically from the same shard, so batch sizes never change.
void Loader::Impl::load_or_substitute(Worker& w, Batch::Slot* slot, size_t i) {
  const uint64_t id = slot->ids.samples[i];
  auto problem = load(w, slot, i, id);
  if (!problem) return;
  if (options.on_bad == BadRecordPolicy::kFail) {
    fail("{}: {}; run `evenfeed verify {}`, or load with the substitute policy",
         dataset.describe(id), *problem, dataset.dir().string());
  }
  // The first half of the tries stay in the sample's shard (its pages are likely
  // resident); the rest draw from the whole dataset, since a shard that cannot be
  // opened at all (truncated, missing) has no readable substitute of its own.
  const ShardEntry& shard = dataset.manifest().shards[dataset.shard_of(id)];
  for (int attempt = 0; attempt < kSubstituteTries; ++attempt) {
    CounterRng rng(options.seed, RngStream::kSubstitute, epoch,
                   id * kSubstituteTries + static_cast<uint64_t>(attempt));
    const uint64_t other = attempt < kSubstituteTries / 2 ? shard.first_id + rng.below(shard.count)
                                                          : rng.below(dataset.size());
    if (other == id || load(w, slot, i, other)) continue;
    slot->ids.samples[i] = other;
    slot->replaced[i] = id;
    ++substituted;
    log_warn("{}: {}; replaced by sample {} in this batch", dataset.describe(id), *problem, other);
    return;
  }
  fail("{}: {}; no readable substitute found in {} tries; run `evenfeed verify {}`",
       dataset.describe(id), *problem, kSubstituteTries, dataset.dir().string());
}

void Loader::Impl::prepare_tokens(Batch::Slot* slot) {
  const size_t n = slot->ids.samples.size();
  slot->max_length = 0;
  slot->lengths.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t length = dataset.index().lengths()[slot->ids.samples[i]];
    if (options.max_tokens > 0) length = std::min<uint64_t>(length, options.max_tokens);
    slot->lengths[i] = static_cast<uint32_t>(length);
    slot->max_length = std::max(slot->max_length, slot->lengths[i]);
  }
  const size_t cells = n * slot->max_length;
  slot->data.reserve(std::max<size_t>(cells, 1) * sizeof(int32_t));
  slot->mask.resize(cells);
}

void Loader::Impl::fill(Batch::Slot* slot) {
  try {
    const size_t n = slot->ids.samples.size();
    slot->labels.resize(n);
    slot->crops.assign(n, CropBox{});
    slot->replaced.assign(n, kNoSubstitute);
    slot->substitutions.clear();
    if (dataset.manifest().kind == DatasetKind::kTokens) {
      prepare_tokens(slot);
    } else {
      slot->data.reserve(n * options.image.sample_bytes());
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n), [&](const tbb::blocked_range<size_t>& r) {
      Worker& w = workers.local();
      for (size_t i = r.begin(); i < r.end(); ++i) load_or_substitute(w, slot, i);
    });
    for (size_t i = 0; i < n; ++i) {
      if (slot->replaced[i] != kNoSubstitute)
        slot->substitutions.emplace_back(i, slot->replaced[i]);
    }
    if (options.release_pages) dataset.release_resident_pages();
    samples += n;
    ++batches;
  } catch (...) {
    slot->error = std::current_exception();
  }
  slot->ready.store(true, std::memory_order_release);
}

Loader::Loader(const Dataset& dataset, const LoaderOptions& options, uint32_t epoch,
               BatchSource source)
    : impl_(std::make_unique<Impl>(dataset, options, epoch, std::move(source))) {
  EVENFEED_CHECK(options.prefetch >= 1, "prefetch must be at least 1, got {}", options.prefetch);
  EVENFEED_CHECK(options.image.size >= 1, "image size must be at least 1, got {}",
                 options.image.size);
  for (int k = 0; k < options.prefetch; ++k) {
    impl_->slots.push_back(std::make_unique<Batch::Slot>(options.pin_memory));
    impl_->free_slots.push_back(impl_->slots.back().get());
  }
}

Loader::~Loader() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  for (auto& slot : impl_->slots) impl_->arena.execute([&] { slot->group.wait(); });
}

std::optional<Batch> Loader::next() {
  Impl& m = *impl_;
  std::unique_lock<std::mutex> lock(m.mutex);
  m.launch_more();
  if (m.in_order.empty()) {
    // Nothing in flight: the epoch is over, unless the consumer holds every slot.
    EVENFEED_CHECK(
        m.source_done || !m.free_slots.empty(),
        "next() called while all {} batch slots are held by the consumer; drop a Batch first or "
        "raise prefetch",
        m.slots.size());
    return std::nullopt;
  }
  Batch::Slot* slot = m.in_order.front();
  m.in_order.pop_front();
  uint64_t ready = slot->ready.load();
  for (const Batch::Slot* s : m.in_order) ready += s->ready.load();
  m.ready_sum += ready;
  ++m.next_calls;
  lock.unlock();
  // Wait by working: the consumer thread joins the arena and runs loader tasks until
  // this slot's batch is done.
  const auto start = Clock::now();
  m.arena.execute([slot] { slot->group.wait(); });
  m.wait_ns += nanoseconds_since(start);
  if (slot->error) {
    std::exception_ptr error = slot->error;
    release(slot);
    std::rethrow_exception(error);
  }
  return Batch(this, slot);
}

void Loader::release(Batch::Slot* slot) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->free_slots.push_back(slot);
  impl_->launch_more();
}

LoaderStats Loader::stats() const {
  const Impl& m = *impl_;
  LoaderStats s;
  s.batches = m.batches;
  s.samples = m.samples;
  s.substituted = m.substituted;
  s.bytes_read = m.bytes_read;
  s.read_seconds = m.read_ns * 1e-9;
  s.decode_seconds = m.decode_ns * 1e-9;
  s.resize_seconds = m.resize_ns * 1e-9;
  s.collate_seconds = m.collate_ns * 1e-9;
  s.consumer_wait_seconds = m.wait_ns * 1e-9;
  s.mean_ready_batches =
      m.next_calls > 0 ? static_cast<double>(m.ready_sum) / static_cast<double>(m.next_calls) : 0;
  return s;
}

Batch::Batch(Batch&& other) noexcept
    : loader_(std::exchange(other.loader_, nullptr)), slot_(std::exchange(other.slot_, nullptr)) {}

Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    if (loader_ != nullptr) loader_->release(slot_);
    loader_ = std::exchange(other.loader_, nullptr);
    slot_ = std::exchange(other.slot_, nullptr);
  }
  return *this;
}

Batch::~Batch() {
  if (loader_ != nullptr) loader_->release(slot_);
}

uint64_t Batch::index() const {
  return slot_->index;
}
size_t Batch::size() const {
  return slot_->ids.samples.size();
}
std::span<const uint64_t> Batch::sample_ids() const {
  return slot_->ids.samples;
}
std::span<const uint8_t> Batch::valid() const {
  return slot_->ids.valid;
}
std::span<const int32_t> Batch::labels() const {
  return slot_->labels;
}
const uint8_t* Batch::images_uint8() const {
  return slot_->data.data();
}
const float* Batch::images_float() const {
  return reinterpret_cast<const float*>(slot_->data.data());
}
uint32_t Batch::max_length() const {
  return slot_->max_length;
}
std::span<const int32_t> Batch::tokens() const {
  return {reinterpret_cast<const int32_t*>(slot_->data.data()), size() * slot_->max_length};
}
std::span<const uint32_t> Batch::lengths() const {
  return slot_->lengths;
}
std::span<const uint8_t> Batch::mask() const {
  return slot_->mask;
}
std::span<const CropBox> Batch::crops() const {
  return slot_->crops;
}
const std::vector<std::pair<size_t, uint64_t>>& Batch::substitutions() const {
  return slot_->substitutions;
}

BatchSource batches_of_rank(StepPlanner& planner, uint32_t rank) {
  return [&planner, rank](RankBatch& batch) {
    PlanStep step;
    if (!planner.next(step)) return false;
    EVENFEED_CHECK(rank < step.ranks.size(), "rank {} is out of range for world size {}", rank,
                   step.ranks.size());
    batch = std::move(step.ranks[rank]);
    return true;
  };
}

}  // namespace evenfeed
