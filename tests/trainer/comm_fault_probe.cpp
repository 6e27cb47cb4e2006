// A rank program for the failure tests: every rank joins an all-reduce with a short
// timeout, except that rank 1 misbehaves as told:
//   skip: it never issues the collective (sleeps, then exits normally)
//   exit: it exits with status 3 before the collective, without MPI_Finalize
// The other ranks must report a timeout or a failure naming the collective and end
// the job non-zero within the timeout.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "trainer/mpi_communicator.h"
#include "trainer/mpi_runtime.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: comm_fault_probe skip|exit TIMEOUT_MS\n");
    return 2;
  }
  const std::string scenario = argv[1];
  evenfeed::MpiRuntime mpi(/*force=*/true);
  int exit_code = 0;
  {
    evenfeed::MpiCommunicator comm;
    comm.barrier({})->wait();  // everyone is up
    if (comm.rank() == 1 && scenario == "exit") std::_Exit(3);
    if (comm.rank() == 1 && scenario == "skip") {
      std::this_thread::sleep_for(std::chrono::seconds(30));
      return 0;
    }
    std::vector<float> values(1000, 1.0f);
    evenfeed::AllReduceOptions options;
    options.timeout = std::chrono::milliseconds(std::atoi(argv[2]));
    try {
      comm.all_reduce(values.data(), values.size(), options)->wait();
      std::printf("rank %d: all_reduce completed\n", comm.rank());
    } catch (const evenfeed::Error& e) {
      std::fprintf(stderr, "evenfeed: error: %s\n", e.what());
      exit_code = 1;
    }
  }
  if (exit_code != 0) mpi.abort(exit_code);
  return exit_code;
}
