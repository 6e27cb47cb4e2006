// The NCCL backend of Communicator, on device buffers, one process per GPU.
//
// Bootstrapped through MPI: rank 0 makes the unique id and broadcasts it; the device
// is set before the communicator is created. Operations run on a communication stream
// of their own, ordered after the work already queued on the compute stream (an event
// between the two), and each records an event that Work::wait polls together with
// ncclCommGetAsyncError. On an error or at the timeout the communicator is aborted
// (ncclCommAbort) and wait() throws, rather than the rank hanging in a kernel.
#pragma once

#include <mpi.h>

#include <chrono>
#include <memory>

#include "cuda/gpu_runtime.h"
#include "trainer/communicator.h"

namespace evenfeed {

struct NcclOptions {
  int device = 0;                      // this rank's GPU (usually its local rank)
  GpuStream compute_stream = nullptr;  // collectives start after work queued here
  std::chrono::milliseconds init_timeout{std::chrono::minutes(2)};
};

// Collective over the ranks of `comm`. Throws Error when no GPU is visible or NCCL
// fails or times out while connecting.
std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm comm, const NcclOptions& options);

}  // namespace evenfeed
