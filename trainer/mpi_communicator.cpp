#include "trainer/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/bfloat16.h"
#include "trainer/local_communicator.h"
#include "trainer/mpi_check.h"

namespace evenfeed {
namespace {

using Clock = std::chrono::steady_clock;

// MPI counts are ints: larger operations are split into chunks of this many elements.
constexpr size_t kMaxChunk = size_t{1} << 30;

void sum_bfloat16(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *count; ++i)
    b[i] = float_to_bfloat16(bfloat16_to_float(a[i]) + bfloat16_to_float(b[i]));
}

void divide(void* data, size_t count, DataType type, int divisor) {
  if (type == DataType::kFloat32) {
    auto* values = static_cast<float*>(data);
    for (size_t i = 0; i < count; ++i) values[i] /= static_cast<float>(divisor);
  } else {
    auto* values = static_cast<uint16_t*>(data);
    for (size_t i = 0; i < count; ++i)
      values[i] = float_to_bfloat16(bfloat16_to_float(values[i]) / static_cast<float>(divisor));
  }
}

}  // namespace

// One collective: how to start it (one or more MPI requests), what to do once it is
// complete, and its state, which the issuing thread waits on.
struct MpiCommunicator::Operation {
  std::string what;  // "all_reduce of 1000 float32", for messages
  Clock::time_point deadline;
  std::chrono::milliseconds timeout{0};
  std::function<void(MPI_Comm, std::vector<MPI_Request>&)> start;
  std::function<void()> finish;  // runs on the engine thread after completion
  std::vector<MPI_Request> requests;

  std::mutex mutex;
  std::condition_variable changed;
  bool finished = false;
  std::string error;  // empty on success
  // Issued by the caller, then seen complete by the engine thread (WorkSpan).
  Clock::time_point issued, ended;
};

// The thread that makes every MPI call, and the queue feeding it.
struct MpiCommunicator::Engine {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Op bfloat16_sum = MPI_OP_NULL;
  int rank = 0, world_size = 1;

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Operation>> queued;
  bool stopping = false;
  std::string broken;  // why the communicator can no longer be used
  std::thread thread;

  void run();
  bool start(const std::shared_ptr<Operation>& op);
  bool progress(std::vector<std::shared_ptr<Operation>>& active);
  void complete(Operation& op, std::string error);
  void break_with(const std::string& reason);
  std::string broken_reason();
};

void MpiCommunicator::Engine::complete(Operation& op, std::string error) {
  std::lock_guard lock(op.mutex);
  op.ended = Clock::now();
  op.finished = true;
  op.error = std::move(error);
  op.changed.notify_all();
}

void MpiCommunicator::Engine::break_with(const std::string& reason) {
  std::lock_guard lock(mutex);
  if (broken.empty()) broken = reason;
}

bool MpiCommunicator::Engine::start(const std::shared_ptr<Operation>& op) {
  try {
    op->start(comm, op->requests);
    return true;
  } catch (const Error& e) {
    const std::string reason =
        fmt::format("{} failed on rank {} of {}: {}", op->what, rank, world_size, e.what());
    break_with(reason);
    complete(*op, reason);
    return false;
  }
}

// Tests every request in flight once; returns true when something finished.
bool MpiCommunicator::Engine::progress(std::vector<std::shared_ptr<Operation>>& active) {
  bool moved = false;
  const auto now = Clock::now();
  for (auto it = active.begin(); it != active.end();) {
    Operation& op = **it;
    int flag = 0;
    const int rc = MPI_Testall(static_cast<int>(op.requests.size()), op.requests.data(), &flag,
                               MPI_STATUSES_IGNORE);
    std::string error;
    if (rc != MPI_SUCCESS) {
      error = fmt::format("{} failed on rank {} of {}: {}; a peer rank has probably exited",
                          op.what, rank, world_size, mpi_error_text(rc));
    } else if (!flag && now > op.deadline) {
      error = fmt::format(
          "{} timed out after {:.1f} s on rank {} of {}: a peer rank died, hung, or did not issue "
          "the same collective; check the other ranks' output (the timeout is --comm-timeout)",
          op.what, op.timeout.count() / 1000.0, rank, world_size);
    } else if (!flag) {
      ++it;
      continue;
    }
    if (error.empty() && op.finish) op.finish();
    if (!error.empty()) break_with(error);
    complete(op, error);
    it = active.erase(it);
    moved = true;
  }
  return moved;
}

void MpiCommunicator::Engine::run() {
  std::vector<std::shared_ptr<Operation>> active;
  int idle_polls = 0;
  for (;;) {
    std::deque<std::shared_ptr<Operation>> incoming;
    bool stop = false;
    {
      std::unique_lock lock(mutex);
      if (active.empty()) wake.wait(lock, [&] { return stopping || !queued.empty(); });
      if (stopping && queued.empty() && active.empty()) return;
      stop = stopping;
      incoming.swap(queued);
    }
    for (auto& op : incoming) {
      std::string reason = broken_reason();
      if (!reason.empty()) {
        complete(*op, "the communicator is unusable after an earlier failure: " + reason);
      } else if (start(op)) {
        active.push_back(std::move(op));
      }
    }
    if (progress(active) || !incoming.empty()) {
      idle_polls = 0;
    } else if (++idle_polls > 64) {
      // Nothing moved for a while: poll less often, so a rank waiting on a slow peer
      // does not take a core from the computation that rank is overlapping.
      std::this_thread::sleep_for(std::chrono::microseconds(idle_polls > 2000 ? 500 : 50));
    } else {
      std::this_thread::yield();
    }
    if (const std::string reason = broken_reason(); stop && !reason.empty()) {
      // Requests of a failed collective can never complete; leave them to MPI_Abort.
      for (auto& op : active) complete(*op, reason);
      return;
    }
  }
}

std::string MpiCommunicator::Engine::broken_reason() {
  std::lock_guard lock(mutex);
  return broken;
}

namespace {

class MpiWork : public Work {
 public:
  explicit MpiWork(std::shared_ptr<MpiCommunicator::Operation> op) : op_(std::move(op)) {}
  ~MpiWork() override {
    std::unique_lock lock(op_->mutex);
    op_->changed.wait(lock, [&] { return op_->finished; });
  }
  bool done() override {
    std::lock_guard lock(op_->mutex);
    return op_->finished;
  }
  WorkSpan span() override {
    std::lock_guard lock(op_->mutex);
    if (!op_->finished) return {};
    auto seconds = [](Clock::time_point t) {
      return std::chrono::duration<double>(t.time_since_epoch()).count();
    };
    return {seconds(op_->issued), seconds(op_->ended)};
  }
  void wait() override {
    std::unique_lock lock(op_->mutex);
    op_->changed.wait(lock, [&] { return op_->finished; });
    if (!op_->error.empty()) throw Error(op_->error);
  }

 private:
  std::shared_ptr<MpiCommunicator::Operation> op_;
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : engine_(std::make_shared<Engine>()) {
  MPI_CHECK(MPI_Comm_dup(comm, &engine_->comm));
  MPI_CHECK(MPI_Comm_set_errhandler(engine_->comm, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(engine_->comm, &rank_));
  MPI_CHECK(MPI_Comm_size(engine_->comm, &world_size_));
  MPI_CHECK(MPI_Op_create(&sum_bfloat16, 1, &engine_->bfloat16_sum));
  engine_->rank = rank_;
  engine_->world_size = world_size_;
  engine_->thread = std::thread([engine = engine_.get()] { engine->run(); });
}

MpiCommunicator::~MpiCommunicator() {
  {
    std::lock_guard lock(engine_->mutex);
    engine_->stopping = true;
  }
  engine_->wake.notify_all();
  engine_->thread.join();
  // After a failure, requests may still be pending: freeing the communicator could
  // block on them, so it is left for MPI_Abort / process exit.
  if (engine_->broken.empty()) {
    MPI_Op_free(&engine_->bfloat16_sum);
    MPI_Comm_free(&engine_->comm);
  }
}

namespace {

std::unique_ptr<Work> submit(MpiCommunicator::Engine& engine,
                             std::shared_ptr<MpiCommunicator::Operation> op,
                             const CollectiveOptions& options) {
  op->timeout = options.timeout;
  op->issued = Clock::now();
  op->deadline = op->issued + options.timeout;
  {
    std::lock_guard lock(engine.mutex);
    if (!engine.broken.empty())
      throw Error("the communicator is unusable after an earlier failure: " + engine.broken);
    engine.queued.push_back(op);
  }
  engine.wake.notify_one();
  return std::make_unique<MpiWork>(std::move(op));
}

}  // namespace

std::unique_ptr<Work> MpiCommunicator::all_reduce(void* data, size_t count,
                                                  const AllReduceOptions& options) {
  auto op = std::make_shared<Operation>();
  op->what = fmt::format("all_reduce of {} {}", count, data_type_name(options.type));
  const bool bf16 = options.type == DataType::kBFloat16;
  const MPI_Datatype type = bf16 ? MPI_UINT16_T : MPI_FLOAT;
  const MPI_Op sum = bf16 ? engine_->bfloat16_sum : MPI_SUM;
  const size_t size = element_size(options.type);
  op->start = [=](MPI_Comm comm, std::vector<MPI_Request>& requests) {
    for (size_t offset = 0; offset < count; offset += kMaxChunk) {
      const int n = static_cast<int>(std::min(kMaxChunk, count - offset));
      MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
      MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + offset * size, n, type, sum,
                               comm, &request));
    }
  };
  if (options.op == ReduceOp::kAverage && world_size_ > 1) {
    op->finish = [=, world = world_size_] { divide(data, count, options.type, world); };
  }
  return submit(*engine_, std::move(op), options);
}

std::unique_ptr<Work> MpiCommunicator::broadcast(void* data, size_t bytes,
                                                 const BroadcastOptions& options) {
  EVENFEED_CHECK(options.root >= 0 && options.root < world_size_,
                 "broadcast root {} is not a rank of this world of {}", options.root, world_size_);
  auto op = std::make_shared<Operation>();
  op->what = fmt::format("broadcast of {} bytes from rank {}", bytes, options.root);
  op->start = [=](MPI_Comm comm, std::vector<MPI_Request>& requests) {
    for (size_t offset = 0; offset < bytes; offset += kMaxChunk) {
      const int n = static_cast<int>(std::min(kMaxChunk, bytes - offset));
      MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
      MPI_CHECK(
          MPI_Ibcast(static_cast<char*>(data) + offset, n, MPI_BYTE, options.root, comm, &request));
    }
  };
  return submit(*engine_, std::move(op), options);
}

std::unique_ptr<Work> MpiCommunicator::all_gather(const void* sent, void* received, size_t bytes,
                                                  const AllGatherOptions& options) {
  EVENFEED_CHECK(bytes <= INT_MAX, "all_gather of {} bytes per rank is over MPI's limit of {}",
                 bytes, INT_MAX);
  auto op = std::make_shared<Operation>();
  op->what = fmt::format("all_gather of {} bytes per rank", bytes);
  op->start = [=](MPI_Comm comm, std::vector<MPI_Request>& requests) {
    const int n = static_cast<int>(bytes);
    MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
    MPI_CHECK(MPI_Iallgather(sent, n, MPI_BYTE, received, n, MPI_BYTE, comm, &request));
  };
  return submit(*engine_, std::move(op), options);
}

std::unique_ptr<Work> MpiCommunicator::barrier(const BarrierOptions& options) {
  auto op = std::make_shared<Operation>();
  op->what = "barrier";
  op->start = [](MPI_Comm comm, std::vector<MPI_Request>& requests) {
    MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
    MPI_CHECK(MPI_Ibarrier(comm, &request));
  };
  return submit(*engine_, std::move(op), options);
}

std::unique_ptr<Communicator> make_host_communicator(int world_size) {
  if (world_size > 1) return std::make_unique<MpiCommunicator>();
  return std::make_unique<LocalCommunicator>();
}

}  // namespace evenfeed
