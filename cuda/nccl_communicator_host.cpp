// The host-only build's NCCL factory (nvcc not found at configure time).
#include "core/error.h"
#include "cuda/nccl_communicator.h"

namespace evenfeed {

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm, const NcclOptions&) {
  fail(
      "the NCCL communicator needs CUDA, but evenfeed was built without it (nvcc not found); "
      "the MPI communicator works on host memory");
}

}  // namespace evenfeed
