#include "cuda/nccl_communicator.h"

#include <thread>
#include <utility>

#include "cuda/cuda_check.h"
#include "trainer/mpi_check.h"

namespace evenfeed {
namespace {

using Clock = std::chrono::steady_clock;

// The communicator's shared state: the NCCL handle and its streams. Shared with the
// Work objects, which abort it on error.
struct NcclState {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;        // communication stream
  cudaStream_t compute = nullptr;       // the caller's compute stream
  cudaEvent_t compute_ready = nullptr;  // recorded on compute before each collective
  cudaEvent_t origin = nullptr;         // timing events are measured from this one (WorkSpan)
  int rank = 0, world_size = 1;
  bool aborted = false;
  std::string broken;

  ~NcclState() {
    if (comm != nullptr) {
      if (aborted) {
        // Already aborted: nothing to free.
      } else {
        ncclCommDestroy(comm);
      }
    }
    if (compute_ready != nullptr) cudaEventDestroy(compute_ready);
    if (origin != nullptr) cudaEventDestroy(origin);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Waits for a non-blocking NCCL call to settle, aborting at the deadline.
  void settle(const std::string& what, Clock::time_point deadline,
              std::chrono::milliseconds timeout) {
    for (;;) {
      ncclResult_t state = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
      if (state == ncclSuccess) return;
      if (state != ncclInProgress)
        abort_with(fmt::format("{} failed on rank {} of {}: {}", what, rank, world_size,
                               ncclGetErrorString(state)));
      if (Clock::now() > deadline) abort_with(timeout_message(what, timeout));
      std::this_thread::yield();
    }
  }

  std::string timeout_message(const std::string& what, std::chrono::milliseconds timeout) const {
    return fmt::format(
        "{} timed out after {:.1f} s on rank {} of {}: a peer rank died, hung, or did not issue "
        "the "
        "same collective; NCCL was aborted (the timeout is --comm-timeout)",
        what, timeout.count() / 1000.0, rank, world_size);
  }

  [[noreturn]] void abort_with(const std::string& reason) {
    if (!aborted) {
      ncclCommAbort(comm);
      aborted = true;
    }
    broken = reason;
    throw Error(reason);
  }
};

class NcclWork : public Work {
 public:
  // `started`: a timing event recorded on the communication stream just before the
  // collective; the work owns it.
  NcclWork(std::shared_ptr<NcclState> state, std::string what, std::chrono::milliseconds timeout,
           cudaEvent_t started)
      : state_(std::move(state)),
        what_(std::move(what)),
        timeout_(timeout),
        deadline_(Clock::now() + timeout),
        started_(started) {
    CUDA_CHECK(cudaEventCreate(&done_));  // with timing, for span()
    CUDA_CHECK(cudaEventRecord(done_, state_->stream));
  }
  ~NcclWork() override {
    try {
      if (!finished_) wait();
    } catch (const Error&) {
      // Reported to the next caller: the communicator is now broken.
    }
    cudaEventDestroy(done_);
    cudaEventDestroy(started_);
  }
  WorkSpan span() override {
    float start_ms = 0, end_ms = 0;
    if (!done() || state_->aborted ||
        cudaEventElapsedTime(&start_ms, state_->origin, started_) != cudaSuccess ||
        cudaEventElapsedTime(&end_ms, state_->origin, done_) != cudaSuccess)
      return {};
    return {start_ms / 1000.0, end_ms / 1000.0};
  }
  bool done() override {
    if (finished_) return true;
    const cudaError_t rc = cudaEventQuery(done_);
    if (rc == cudaErrorNotReady) return false;
    CUDA_CHECK(rc);
    finished_ = true;
    return true;
  }
  void wait() override {
    while (!done()) {
      ncclResult_t state = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(state_->comm, &state));
      if (state != ncclSuccess && state != ncclInProgress) {
        state_->abort_with(fmt::format("{} failed on rank {} of {}: {}", what_, state_->rank,
                                       state_->world_size, ncclGetErrorString(state)));
      }
      if (Clock::now() > deadline_) state_->abort_with(state_->timeout_message(what_, timeout_));
      std::this_thread::yield();
    }
  }

 private:
  std::shared_ptr<NcclState> state_;
  std::string what_;
  std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;
  cudaEvent_t done_ = nullptr;
  cudaEvent_t started_ = nullptr;
  bool finished_ = false;
};

ncclDataType_t nccl_type(DataType type) {
  return type == DataType::kFloat32 ? ncclFloat32 : ncclBfloat16;
}

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(std::shared_ptr<NcclState> state) : state_(std::move(state)) {}

  int rank() const override { return state_->rank; }
  int world_size() const override { return state_->world_size; }
  std::string backend() const override { return "nccl"; }
  bool device_buffers() const override { return true; }

  std::unique_ptr<Work> all_reduce(void* data, size_t count,
                                   const AllReduceOptions& options) override {
    const std::string what =
        fmt::format("all_reduce of {} {}", count, data_type_name(options.type));
    if (count == 0) return completed_work();
    return launch(what, options, [&] {
      return ncclAllReduce(data, data, count, nccl_type(options.type),
                           options.op == ReduceOp::kSum ? ncclSum : ncclAvg, state_->comm,
                           state_->stream);
    });
  }
  std::unique_ptr<Work> broadcast(void* data, size_t bytes,
                                  const BroadcastOptions& options) override {
    EVENFEED_CHECK(options.root >= 0 && options.root < world_size(),
                   "broadcast root {} is not a rank of this world of {}", options.root,
                   world_size());
    return launch(fmt::format("broadcast of {} bytes from rank {}", bytes, options.root), options,
                  [&] {
                    return ncclBroadcast(data, data, bytes, ncclUint8, options.root, state_->comm,
                                         state_->stream);
                  });
  }
  std::unique_ptr<Work> all_gather(const void* sent, void* received, size_t bytes,
                                   const AllGatherOptions& options) override {
    return launch(fmt::format("all_gather of {} bytes per rank", bytes), options, [&] {
      return ncclAllGather(sent, received, bytes, ncclUint8, state_->comm, state_->stream);
    });
  }
  std::unique_ptr<Work> barrier(const BarrierOptions& options) override {
    if (scratch_ == nullptr) CUDA_CHECK(cudaMalloc(&scratch_, sizeof(float)));
    return launch("barrier", options, [&] {
      return ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, state_->comm,
                           state_->stream);
    });
  }
  ~NcclCommunicator() override {
    if (scratch_ != nullptr) cudaFree(scratch_);
  }

 private:
  template <typename Call>
  std::unique_ptr<Work> launch(const std::string& what, const CollectiveOptions& options,
                               Call call) {
    if (!state_->broken.empty())
      throw Error("the communicator is unusable after an earlier failure: " + state_->broken);
    // The collective reads what the compute stream has produced so far.
    CUDA_CHECK(cudaEventRecord(state_->compute_ready, state_->compute));
    CUDA_CHECK(cudaStreamWaitEvent(state_->stream, state_->compute_ready, 0));
    cudaEvent_t started = nullptr;
    CUDA_CHECK(cudaEventCreate(&started));
    struct Owned {  // until the work takes it
      cudaEvent_t& event;
      ~Owned() {
        if (event != nullptr) cudaEventDestroy(event);
      }
    } owned{started};
    CUDA_CHECK(cudaEventRecord(started, state_->stream));
    const ncclResult_t rc = call();
    if (rc != ncclSuccess && rc != ncclInProgress)
      state_->abort_with(fmt::format("{} failed on rank {} of {}: {}", what, state_->rank,
                                     state_->world_size, ncclGetErrorString(rc)));
    state_->settle(what, Clock::now() + options.timeout, options.timeout);
    return std::make_unique<NcclWork>(state_, what, options.timeout,
                                      std::exchange(started, nullptr));
  }

  std::shared_ptr<NcclState> state_;
  void* scratch_ = nullptr;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm comm, const NcclOptions& options) {
  EVENFEED_CHECK(gpu_visible(), "the NCCL communicator needs a GPU, and none is visible");
  auto state = std::make_shared<NcclState>();
  MPI_CHECK(MPI_Comm_rank(comm, &state->rank));
  MPI_CHECK(MPI_Comm_size(comm, &state->world_size));
  CUDA_CHECK(cudaSetDevice(options.device));
  ncclUniqueId id{};
  if (state->rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm));
  CUDA_CHECK(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&state->compute_ready, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreate(&state->origin));
  CUDA_CHECK(cudaEventRecord(state->origin, state->stream));
  state->compute = static_cast<cudaStream_t>(options.compute_stream);
  // Non-blocking: calls return at once and are polled, so a peer that never connects
  // ends in a timeout and an abort instead of a hang.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t rc =
      ncclCommInitRankConfig(&state->comm, state->world_size, id, state->rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress)
    fail("NCCL ncclCommInitRankConfig failed on rank {}: {}", state->rank, ncclGetErrorString(rc));
  state->settle("NCCL initialisation", Clock::now() + options.init_timeout, options.init_timeout);
  return std::make_unique<NcclCommunicator>(std::move(state));
}

}  // namespace evenfeed
