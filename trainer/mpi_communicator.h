// The MPI backend of Communicator, on host buffers: MPI_Iallreduce and friends.
//
// All MPI calls of a communicator happen on one thread of its own, which issues each
// operation in order and keeps testing the requests in flight. That is what makes the
// operations truly asynchronous (Open MPI progresses a non-blocking collective only
// inside MPI calls, so a request left alone while the trainer computes would not move)
// and what enforces the timeouts: an operation still unfinished at its deadline fails,
// and the communicator is broken from then on.
#pragma once

#include <mpi.h>

#include <memory>

#include "trainer/communicator.h"

namespace evenfeed {

class MpiCommunicator : public Communicator {
 public:
  // Works on a duplicate of `comm` (so its traffic never mixes with the caller's),
  // with errors returned rather than fatal. MPI must be initialised with at least
  // MPI_THREAD_SERIALIZED, and the caller makes no MPI calls while this object lives
  // except through it.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return "mpi"; }
  bool device_buffers() const override { return false; }

  std::unique_ptr<Work> all_reduce(void* data, size_t count,
                                   const AllReduceOptions& options) override;
  std::unique_ptr<Work> broadcast(void* data, size_t bytes,
                                  const BroadcastOptions& options) override;
  std::unique_ptr<Work> all_gather(const void* sent, void* received, size_t bytes,
                                   const AllGatherOptions& options) override;
  std::unique_ptr<Work> barrier(const BarrierOptions& options) override;

  // Implementation details, named here so the .cpp's helpers can use them.
  struct Operation;
  struct Engine;

 private:
  int rank_ = 0, world_size_ = 1;
  std::shared_ptr<Engine> engine_;
};

// The host-memory communicator of this process: MPI over MPI_COMM_WORLD in a world of
// several ranks, LocalCommunicator in a world of one (no MPI needed).
std::unique_ptr<Communicator> make_host_communicator(int world_size);

}  // namespace evenfeed
