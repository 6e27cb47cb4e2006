// evenfeed bench allreduce: all-reduce time, algorithm and bus bandwidth over message
// sizes, in nccl-tests' definitions (algbw = bytes / time, busbw = algbw x 2(n-1)/n),
// with NCCL on device buffers when a GPU is visible and MPI on host buffers otherwise.
// evenfeed bench h2d: host-to-device GB/s, pinned against pageable (needs a GPU).
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "cuda/bandwidth.h"
#include "cuda/gpu_runtime.h"
#include "cuda/nccl_communicator.h"
#include "tools/commands.h"
#include "tools/ranked.h"
#include "trainer/mpi_communicator.h"

namespace evenfeed::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct CommBenchFlags {
  uint64_t min_bytes = 1024, max_bytes = 64ull << 20;
  int iterations = 20, warmup = 3;
  std::string backend = "auto", type = "float32";
  bool json = false;
};

// NCCL on device buffers when asked, or on `auto` with a GPU and several ranks.
bool wants_nccl(const MpiRuntime& mpi, const std::string& backend) {
  return backend == "nccl" || (backend == "auto" && gpu_visible() && mpi.world_size() > 1);
}

std::unique_ptr<Communicator> make_bench_communicator(const MpiRuntime& mpi, bool nccl,
                                                      GpuStream stream) {
  if (nccl) {
    EVENFEED_CHECK(mpi.active(), "--backend nccl needs a launcher (mpirun or srun)");
    NcclOptions options;
    options.device = mpi.local_rank();
    options.compute_stream = stream;
    return make_nccl_communicator(MPI_COMM_WORLD, options);
  }
  return make_host_communicator(mpi.world_size());
}

int run_allreduce(MpiRuntime& mpi, const CommBenchFlags& f) {
  EVENFEED_CHECK(f.min_bytes >= 4 && f.min_bytes <= f.max_bytes,
                 "--min-bytes must be at least 4 and at most --max-bytes");
  const bool nccl = wants_nccl(mpi, f.backend);
  GpuStream stream = nccl ? (gpu_set_device(mpi.local_rank()), gpu_stream_create()) : nullptr;
  auto comm = make_bench_communicator(mpi, nccl, stream);
  const DataType type = f.type == "bfloat16" ? DataType::kBFloat16 : DataType::kFloat32;
  const size_t element = element_size(type);
  std::vector<uint8_t> host(f.max_bytes, 0);
  void* buffer = comm->device_buffers() ? gpu_device_alloc(f.max_bytes) : host.data();
  const int n = comm->world_size();
  nlohmann::json rows = nlohmann::json::array();
  if (mpi.rank() == 0 && !f.json)
    std::printf("# all-reduce, %d ranks, backend %s, %s\n%12s %12s %10s %10s %10s\n", n,
                comm->backend().c_str(), data_type_name(type), "bytes", "count", "time(us)",
                "algbw", "busbw");
  for (uint64_t bytes = f.min_bytes; bytes <= f.max_bytes; bytes *= 2) {
    const size_t count = bytes / element;
    AllReduceOptions options;
    options.type = type;
    for (int i = 0; i < f.warmup; ++i) comm->all_reduce(buffer, count, options)->wait();
    comm->barrier({})->wait();
    const auto start = Clock::now();
    for (int i = 0; i < f.iterations; ++i) comm->all_reduce(buffer, count, options)->wait();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count() / f.iterations;
    // The slowest rank's time is the operation's time.
    std::vector<double> all(static_cast<size_t>(n));
    comm->all_gather(&seconds, all.data(), sizeof(double), {})->wait();
    for (double s : all) seconds = std::max(seconds, s);
    const double algbw = static_cast<double>(count * element) / seconds / 1e9;
    const double busbw = algbw * 2.0 * (n - 1) / n;
    rows.push_back({{"bytes", count * element},
                    {"count", count},
                    {"time_us", seconds * 1e6},
                    {"algbw_gbps", algbw},
                    {"busbw_gbps", busbw}});
    if (mpi.rank() == 0 && !f.json)
      std::printf("%12zu %12zu %10.1f %10.3f %10.3f\n", count * element, count, seconds * 1e6,
                  algbw, busbw);
  }
  if (mpi.rank() == 0 && f.json) {
    nlohmann::json j = {{"bench", "allreduce"},
                        {"ranks", n},
                        {"backend", comm->backend()},
                        {"type", data_type_name(type)},
                        {"rows", rows}};
    std::printf("%s\n", j.dump().c_str());
  }
  if (comm->device_buffers()) gpu_device_free(buffer);
  comm.reset();
  if (stream != nullptr) gpu_stream_destroy(stream);
  return 0;
}

int run_h2d(const CommBenchFlags& f) {
  EVENFEED_CHECK(gpu_visible(),
                 "bench h2d needs a GPU, and none is visible here; `evenfeed doctor` "
                 "says why");
  if (!f.json) std::printf("%12s %14s %16s\n", "bytes", "pinned GB/s", "pageable GB/s");
  nlohmann::json rows = nlohmann::json::array();
  for (uint64_t bytes = f.min_bytes; bytes <= f.max_bytes; bytes *= 4) {
    const H2dBandwidth bw = measure_h2d(0, bytes, f.iterations);
    rows.push_back(
        {{"bytes", bytes}, {"pinned_gbps", bw.pinned_gbps}, {"pageable_gbps", bw.pageable_gbps}});
    if (!f.json)
      std::printf("%12lu %14.2f %16.2f\n", static_cast<unsigned long>(bytes), bw.pinned_gbps,
                  bw.pageable_gbps);
  }
  if (f.json)
    std::printf("%s\n", nlohmann::json({{"bench", "h2d"}, {"rows", rows}}).dump().c_str());
  return 0;
}

void add_size_flags(CLI::App* cmd, CommBenchFlags& f) {
  cmd->add_option("--min-bytes", f.min_bytes, "Smallest message")
      ->check(CLI::Range(uint64_t{4}, uint64_t{1} << 40));
  cmd->add_option("--max-bytes", f.max_bytes, "Largest message")
      ->check(CLI::Range(uint64_t{4}, uint64_t{1} << 40));
  cmd->add_option("--iterations", f.iterations, "Timed repetitions per size")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", f.json, "Print one JSON object");
}

}  // namespace

void add_bench_comm(CLI::App* bench, Runner& run) {
  static CommBenchFlags f;
  auto* allreduce = bench->add_subcommand(
      "allreduce", "All-reduce time and bandwidth over message sizes (under mpirun -np N)");
  add_size_flags(allreduce, f);
  allreduce->add_option("--backend", f.backend, "auto (NCCL with a GPU, else MPI), mpi or nccl")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}));
  allreduce->add_option("--type", f.type, "float32 or bfloat16")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  allreduce->callback([&run] {
    run = [] { return run_as_rank([](MpiRuntime& mpi) { return run_allreduce(mpi, f); }); };
  });
  auto* h2d = bench->add_subcommand(
      "h2d", "Host-to-device copy bandwidth, pinned vs pageable (needs a GPU)");
  add_size_flags(h2d, f);
  h2d->callback([&run] { run = [] { return run_h2d(f); }; });
}

}  // namespace evenfeed::cli
