#include "trainer/mpi_runtime.h"

#include <unistd.h>

#include <array>
#include <cstdlib>

#include "trainer/mpi_check.h"

namespace evenfeed {

std::string mpi_error_text(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(code, text.data(), &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text.data(), static_cast<size_t>(length));
}

bool launched_by_mpi() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

namespace {

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

// Every rank's host name, gathered in rank order (fixed-width, truncated).
std::vector<std::string> gather_hosts(const std::string& mine, int world_size) {
  constexpr int kWidth = 128;
  std::array<char, kWidth> sent{};
  mine.copy(sent.data(), kWidth - 1);
  std::vector<char> received(static_cast<size_t>(kWidth) * world_size);
  MPI_CHECK(MPI_Allgather(sent.data(), kWidth, MPI_CHAR, received.data(), kWidth, MPI_CHAR,
                          MPI_COMM_WORLD));
  std::vector<std::string> hosts;
  for (int r = 0; r < world_size; ++r)
    hosts.emplace_back(&received[static_cast<size_t>(r) * kWidth]);
  return hosts;
}

}  // namespace

MpiRuntime::MpiRuntime(bool force) : host_(host_name()), hosts_{host_} {
  if (!force && !launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      fail("MPI_Init_thread failed; run under mpirun or srun, or without a launcher for one rank");
    if (provided < MPI_THREAD_SERIALIZED)
      fail(
          "this MPI library offers thread level {}, but evenfeed needs MPI_THREAD_SERIALIZED; "
          "use an MPI built with thread support",
          provided);
    active_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size_));
  MPI_Comm local = MPI_COMM_NULL;
  MPI_CHECK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  MPI_CHECK(MPI_Comm_rank(local, &local_rank_));
  MPI_CHECK(MPI_Comm_size(local, &local_size_));
  MPI_Comm_free(&local);
  hosts_ = gather_hosts(host_, world_size_);
}

MpiRuntime::~MpiRuntime() {
  if (active_) MPI_Finalize();
}

std::string MpiRuntime::library_version() const {
  if (!active_) return "none (single process, no launcher)";
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int length = 0;
  MPI_Get_library_version(text.data(), &length);
  std::string version(text.data(), static_cast<size_t>(length));
  if (const size_t end = version.find_first_of(",\n"); end != std::string::npos)
    version.resize(end);
  return version;
}

void MpiRuntime::abort(int exit_code) const {
  if (active_ && world_size_ > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace evenfeed
