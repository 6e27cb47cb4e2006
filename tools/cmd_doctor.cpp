// evenfeed doctor: what this job runs on (GPUs, CUDA, NCCL, MPI, ranks and hosts) and
// checks that must pass before training: an all-reduce with a known answer, H2D
// bandwidth pinned vs pageable per GPU, cuBLAS products with known answers on each
// rank's GPU (what `train --device gpu` needs), and optionally a loader throughput
// check on a dataset. One line per check (OK, FAILED with the reason, or SKIPPED with why);
// --json for machines; exit 1 when any check failed. Alone or under mpirun -np N.
#include <fmt/ranges.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "cuda/bandwidth.h"
#include "cuda/device_array.h"
#include "cuda/device_info.h"
#include "cuda/gpu_blas.h"
#include "cuda/gpu_runtime.h"
#include "loader/dataset.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"
#include "tools/commands.h"
#include "tools/ranked.h"
#include "trainer/mpi_communicator.h"
#include "trainer/mpi_runtime.h"

namespace evenfeed::cli {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct DoctorFlags {
  std::string data;
  double seconds = 10;
  double timeout = 60;
  bool json = false;
};

struct Check {
  std::string name, status, detail;  // status: OK, FAILED, SKIPPED
};

// Every rank sums (rank + 1) and averages it: the answers are known in closed form.
Check check_all_reduce(Communicator& comm, std::chrono::milliseconds timeout) {
  const int world = comm.world_size();
  const size_t count = 1'000'003;  // odd, and over one MPI eager message
  std::vector<float> sum(count, static_cast<float>(comm.rank() + 1)), average = sum;
  AllReduceOptions options;
  options.timeout = timeout;
  const auto start = Clock::now();
  auto a = comm.all_reduce(sum.data(), count, options);
  options.op = ReduceOp::kAverage;
  auto b = comm.all_reduce(average.data(), count, options);
  a->wait();
  b->wait();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const float want_sum = static_cast<float>(world * (world + 1) / 2);
  const float want_average = want_sum / static_cast<float>(world);
  for (size_t i = 0; i < count; ++i) {
    if (sum[i] != want_sum || average[i] != want_average) {
      return {"all-reduce", "FAILED",
              fmt::format("element {}: sum {} (want {}), average {} (want {})", i, sum[i], want_sum,
                          average[i], want_average)};
    }
  }
  return {"all-reduce", "OK",
          fmt::format("{} ranks ({}), {} floats sum and average correct in {:.1f} ms", world,
                      comm.backend(), count, ms)};
}

// Each rank measures its own GPU (local rank modulo the visible devices); rank 0
// reports all of them.
Check check_h2d(Communicator& comm, const MpiRuntime& mpi, const GpuInfo& gpus,
                std::chrono::milliseconds timeout) {
  double mine[2] = {-1, -1};
  std::string error;
  if (!gpus.devices.empty()) {
    try {
      const int device = mpi.local_rank() % static_cast<int>(gpus.devices.size());
      const H2dBandwidth bw = measure_h2d(device, size_t{256} << 20, 10);
      mine[0] = bw.pinned_gbps;
      mine[1] = bw.pageable_gbps;
    } catch (const Error& e) {
      error = e.what();
      mine[0] = mine[1] = 0;
    }
  }
  std::vector<double> all(2 * static_cast<size_t>(comm.world_size()));
  AllGatherOptions options;
  options.timeout = timeout;
  comm.all_gather(mine, all.data(), sizeof(mine), options)->wait();
  if (gpus.devices.empty()) return {"h2d bandwidth", "SKIPPED", "no GPU visible"};
  std::string detail;
  bool failed = false;
  for (int r = 0; r < comm.world_size(); ++r) {
    const double pinned = all[2 * r], pageable = all[2 * r + 1];
    failed = failed || pinned <= 0;
    detail += fmt::format("{}rank {}: pinned {:.1f} GB/s, pageable {:.1f} GB/s", r ? "; " : "", r,
                          pinned, pageable);
  }
  if (!error.empty()) detail += " (this rank: " + error + ")";
  return {"h2d bandwidth", failed ? "FAILED" : "OK", detail};
}

// Two row-major 2x2 products on this rank's GPU through cuBLAS, one with a transposed
// operand, against answers worked out by hand: loads cuBLAS, and checks the row-major
// convention the GPU models rely on. Returns the error, or "" when both are right.
std::string gpu_products_error(int device) {
  try {
    gpu_set_device(device);
    const GpuStream stream = gpu_stream_create();
    std::string error;
    {
      GpuBlas blas(stream);
      const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
      DeviceArray<float> da, db, dc(4);
      da.upload(a);
      db.upload(b);
      blas.sgemm(false, false, 2, 2, 2, 1.0f, da.data(), 2, db.data(), 2, 0.0f, dc.data(), 2);
      gpu_stream_synchronize(stream);
      const std::vector<float> ab = dc.download(4);
      blas.sgemm(true, false, 2, 2, 2, 1.0f, da.data(), 2, db.data(), 2, 0.0f, dc.data(), 2);
      gpu_stream_synchronize(stream);
      const std::vector<float> atb = dc.download(4);
      if (ab != std::vector<float>{19, 22, 43, 50} || atb != std::vector<float>{26, 30, 38, 44})
        error = fmt::format("wrong products: A*B = [{}], A^T*B = [{}]", fmt::join(ab, ", "),
                            fmt::join(atb, ", "));
    }
    gpu_stream_destroy(stream);
    return error;
  } catch (const Error& e) {
    return e.what();
  }
}

Check check_gpu_products(Communicator& comm, const MpiRuntime& mpi, const GpuInfo& gpus,
                         std::chrono::milliseconds timeout) {
  std::string error;
  if (!gpus.devices.empty())
    error = gpu_products_error(mpi.local_rank() % static_cast<int>(gpus.devices.size()));
  const int32_t mine = error.empty() ? 1 : 0;
  std::vector<int32_t> all(static_cast<size_t>(comm.world_size()));
  AllGatherOptions options;
  options.timeout = timeout;
  comm.all_gather(&mine, all.data(), sizeof(mine), options)->wait();
  if (gpus.devices.empty()) return {"gpu products", "SKIPPED", "no GPU visible"};
  const auto good = std::count(all.begin(), all.end(), 1);
  if (good == comm.world_size())
    return {"gpu products", "OK",
            fmt::format("cuBLAS products right on all {} rank(s)", comm.world_size())};
  return {"gpu products", "FAILED",
          fmt::format("{} of {} rank(s) failed{}", comm.world_size() - good, comm.world_size(),
                      error.empty() ? "" : " (this rank: " + error + ")")};
}

// Loads this rank's share of the dataset for `seconds` and reports samples/s.
Check check_loader(const std::string& dir, double seconds, const Communicator& comm) {
  try {
    Dataset dataset(dir);
    SamplerOptions sampler;
    sampler.batch_size = 64;
    LoaderOptions options;
    options.image.size = 224;
    uint64_t samples = 0;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    for (uint32_t epoch = 0; elapsed() < seconds; ++epoch) {
      DistributedSampler plan(dataset.size(), static_cast<uint32_t>(comm.world_size()), sampler,
                              {0, epoch, {}});
      Loader loader(dataset, options, epoch,
                    batches_of_rank(plan, static_cast<uint32_t>(comm.rank())));
      while (elapsed() < seconds) {
        auto batch = loader.next();
        if (!batch) break;
        samples += batch->size();
      }
    }
    return {"loader", "OK",
            fmt::format("{:.0f} samples/s on rank {} over {:.1f} s ({}, {} samples)",
                        samples / elapsed(), comm.rank(), elapsed(), dir, dataset.size())};
  } catch (const Error& e) {
    return {"loader", "FAILED", e.what()};
  }
}

json environment(const MpiRuntime& mpi, const GpuInfo& gpus) {
  json devices = json::array();
  for (const GpuDevice& d : gpus.devices) {
    devices.push_back(
        {{"index", d.index},
         {"name", d.name},
         {"memory_gib", d.memory_bytes / double(1ull << 30)},
         {"compute_capability", fmt::format("{}.{}", d.compute_major, d.compute_minor)}});
  }
  return {
      {"gpus", devices},
      {"no_gpu_reason", gpus.no_gpu_reason},
      {"cuda_built", built_with_cuda()},
      {"cuda_runtime", gpus.runtime_version ? cuda_version_string(gpus.runtime_version) : "none"},
      {"cuda_driver", gpus.driver_version ? cuda_version_string(gpus.driver_version) : "none"},
      {"nccl", gpus.nccl_version
                   ? fmt::format("{}.{}.{}", gpus.nccl_version / 10000,
                                 gpus.nccl_version / 100 % 100, gpus.nccl_version % 100)
                   : "none"},
      {"mpi", mpi.library_version()},
      {"rank", mpi.rank()},
      {"world_size", mpi.world_size()},
      {"hosts", mpi.hosts()}};
}

void print_environment(const json& env) {
  if (env["gpus"].empty()) {
    std::printf("GPUs:     none (%s)\n", env["no_gpu_reason"].get<std::string>().c_str());
  }
  for (const json& g : env["gpus"]) {
    std::printf("GPU %d:    %s, %.1f GiB, compute capability %s\n", g["index"].get<int>(),
                g["name"].get<std::string>().c_str(), g["memory_gib"].get<double>(),
                g["compute_capability"].get<std::string>().c_str());
  }
  std::printf("CUDA:     runtime %s, driver %s%s\n", env["cuda_runtime"].get<std::string>().c_str(),
              env["cuda_driver"].get<std::string>().c_str(),
              env["cuda_built"].get<bool>() ? "" : " (built without CUDA)");
  std::printf("NCCL:     %s\n", env["nccl"].get<std::string>().c_str());
  std::printf("MPI:      %s\n", env["mpi"].get<std::string>().c_str());
  // Hosts in rank order, with the ranks each runs.
  std::map<std::string, std::vector<int>> layout;
  const auto hosts = env["hosts"].get<std::vector<std::string>>();
  for (size_t r = 0; r < hosts.size(); ++r) layout[hosts[r]].push_back(static_cast<int>(r));
  std::printf("Ranks:    %d on %zu host%s\n", env["world_size"].get<int>(), layout.size(),
              layout.size() == 1 ? "" : "s");
  for (const auto& [host, ranks] : layout)
    std::printf("  %s: ranks %s\n", host.c_str(), fmt::format("{}", fmt::join(ranks, ",")).c_str());
}

int run_doctor(MpiRuntime& mpi, const DoctorFlags& f) {
  const GpuInfo gpus = query_gpus();
  std::unique_ptr<Communicator> comm = make_host_communicator(mpi.world_size());
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(f.timeout * 1000));
  std::vector<Check> checks;
  checks.push_back(check_all_reduce(*comm, timeout));
  checks.push_back(check_h2d(*comm, mpi, gpus, timeout));
  checks.push_back(check_gpu_products(*comm, mpi, gpus, timeout));
  if (!f.data.empty()) checks.push_back(check_loader(f.data, f.seconds, *comm));
  // A check failed on any rank fails the job; rank 0 reports.
  int failed = 0;
  for (const Check& c : checks) failed += c.status == "FAILED";
  std::vector<int> failures(static_cast<size_t>(comm->world_size()));
  AllGatherOptions options;
  options.timeout = timeout;
  comm->all_gather(&failed, failures.data(), sizeof(int), options)->wait();
  int total_failed = 0;
  for (int n : failures) total_failed += n;
  const json env = environment(mpi, gpus);
  if (mpi.rank() != 0) {
    for (const Check& c : checks)
      if (c.status == "FAILED")
        std::fprintf(stderr, "rank %d: FAILED %s: %s\n", mpi.rank(), c.name.c_str(),
                     c.detail.c_str());
  } else if (f.json) {
    json j = env;
    j["checks"] = json::array();
    for (const Check& c : checks)
      j["checks"].push_back({{"name", c.name}, {"status", c.status}, {"detail", c.detail}});
    j["failed_checks_all_ranks"] = total_failed;
    std::printf("%s\n", j.dump().c_str());
  } else {
    print_environment(env);
    for (const Check& c : checks)
      std::printf("%-8s %s: %s\n", c.status.c_str(), c.name.c_str(), c.detail.c_str());
    if (total_failed > 0) std::printf("%d check(s) failed across the ranks\n", total_failed);
  }
  comm.reset();  // before MPI_Finalize
  return total_failed > 0 ? 1 : 0;
}

}  // namespace

void add_doctor(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand("doctor",
                                 "Check GPUs, CUDA, NCCL, MPI and the ranks before training "
                                 "(alone or under mpirun -np N)");
  static DoctorFlags f;
  cmd->add_option("--data", f.data, "Also check loader throughput on this dataset");
  cmd->add_option("--seconds", f.seconds, "Length of the loader check")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--comm-timeout", f.timeout, "Seconds before a collective is declared hung")
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_flag("--json", f.json, "Print one JSON object");
  cmd->callback([&run] {
    run = [] { return run_as_rank([](MpiRuntime& mpi) { return run_doctor(mpi, f); }); };
  });
}

}  // namespace evenfeed::cli
