// The one interface every rank uses to talk to the others: all-reduce, broadcast,
// all-gather and barrier, each asynchronous (a Work handle to wait on) and each with
// a timeout, so a peer that dies or never joins ends in a clear Error rather than an
// endless wait. Backends: MPI on host buffers (trainer/mpi_communicator.h), NCCL on
// device buffers (cuda/nccl_communicator.h), and a single-rank one for runs without a
// launcher (trainer/local_communicator.h).
//
// Every rank must issue the same collectives in the same order (as with MPI and NCCL).
// After a timeout or a failure the communicator is broken: later calls throw at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data_type.h"

namespace evenfeed {

enum class ReduceOp { kSum, kAverage };

// Options of every collective (gloo's style: one struct per operation, defaults that
// suit training). Each collective that does not finish within `timeout` of being
// issued fails with an Error naming the operation, the rank and the likely cause.
struct CollectiveOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

struct AllReduceOptions : CollectiveOptions {
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
};

struct BroadcastOptions : CollectiveOptions {
  int root = 0;  // the rank whose buffer everyone receives
};

using AllGatherOptions = CollectiveOptions;
using BarrierOptions = CollectiveOptions;

// When an operation was moving data, in seconds on a clock of its communicator's own
// (so spans of one communicator can be compared and merged, not those of two): for
// MPI the steady clock from the caller issuing it to the engine thread seeing it
// complete; for NCCL GPU events on the communication stream around the collective.
struct WorkSpan {
  double start = 0, end = 0;
  double seconds() const { return end - start; }
};

// An operation in flight. The buffers it was given must stay untouched until wait()
// returns. Destroying a Work that was not waited for waits for it (and swallows its
// error, which the next call reports).
class Work {
 public:
  virtual ~Work() = default;
  // True once the operation has finished (successfully or not); never blocks.
  virtual bool done() = 0;
  // Blocks until the operation has finished; throws Error on failure or timeout.
  virtual void wait() = 0;
  // Once done: when it ran (telemetry's communication time). Empty for operations
  // that moved nothing (count 0, a world of one).
  virtual WorkSpan span() { return {}; }
};

// The time covered by at least one of `spans` (overlaps counted once).
double covered_seconds(std::vector<WorkSpan> spans);

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // "mpi", "nccl" or "local".
  virtual std::string backend() const = 0;
  // True when buffers must be device memory (NCCL), false for host memory.
  virtual bool device_buffers() const = 0;

  // In place over `count` elements (count 0 is allowed and completes at once).
  virtual std::unique_ptr<Work> all_reduce(void* data, size_t count,
                                           const AllReduceOptions& options) = 0;
  virtual std::unique_ptr<Work> broadcast(void* data, size_t bytes,
                                          const BroadcastOptions& options) = 0;
  // Gathers `bytes` from every rank into `received` (world_size() x bytes, rank order).
  virtual std::unique_ptr<Work> all_gather(const void* sent, void* received, size_t bytes,
                                           const AllGatherOptions& options) = 0;
  virtual std::unique_ptr<Work> barrier(const BarrierOptions& options) = 0;
};

// A Work that is already complete (count 0, world size 1).
std::unique_ptr<Work> completed_work();

}  // namespace evenfeed
