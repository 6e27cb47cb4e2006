// The main of test binaries run under mpirun: MPI is initialised around the whole
// GoogleTest run, and only rank 0 prints the usual report (every rank's failures
// still print, and any failing rank fails the job).
#include <gtest/gtest.h>

#include "trainer/mpi_runtime.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  evenfeed::MpiRuntime mpi(/*force=*/true);
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
