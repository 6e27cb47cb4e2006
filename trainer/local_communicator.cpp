#include "trainer/local_communicator.h"

#include <cstring>

#include "core/error.h"

namespace evenfeed {

std::unique_ptr<Work> LocalCommunicator::all_reduce(void*, size_t, const AllReduceOptions&) {
  return completed_work();
}

std::unique_ptr<Work> LocalCommunicator::broadcast(void*, size_t, const BroadcastOptions& options) {
  EVENFEED_CHECK(options.root == 0, "broadcast root {} is not a rank of this world of 1",
                 options.root);
  return completed_work();
}

std::unique_ptr<Work> LocalCommunicator::all_gather(const void* sent, void* received, size_t bytes,
                                                    const AllGatherOptions&) {
  if (bytes > 0 && sent != received) std::memmove(received, sent, bytes);
  return completed_work();
}

std::unique_ptr<Work> LocalCommunicator::barrier(const BarrierOptions&) {
  return completed_work();
}

}  // namespace evenfeed
