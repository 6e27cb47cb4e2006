// The Communicator of a world of one (no launcher): every collective is complete at
// once, all_reduce sums or averages over one rank (a no-op), all_gather copies.
#pragma once

#include "trainer/communicator.h"

namespace evenfeed {

class LocalCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string backend() const override { return "local"; }
  bool device_buffers() const override { return false; }

  std::unique_ptr<Work> all_reduce(void* data, size_t count,
                                   const AllReduceOptions& options) override;
  std::unique_ptr<Work> broadcast(void* data, size_t bytes,
                                  const BroadcastOptions& options) override;
  std::unique_ptr<Work> all_gather(const void* sent, void* received, size_t bytes,
                                   const AllGatherOptions& options) override;
  std::unique_ptr<Work> barrier(const BarrierOptions& options) override;
};

}  // namespace evenfeed
