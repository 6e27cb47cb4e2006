// Commands that run as one rank of a job (doctor, train, bench allreduce): MPI is set
// up around the command, and a fatal error on any rank prints one line naming the
// rank and then ends the whole job (MPI_Abort), so no peer waits on a rank that is gone.
#pragma once

#include <functional>

#include "trainer/mpi_runtime.h"

namespace evenfeed::cli {

int run_as_rank(const std::function<int(MpiRuntime& mpi)>& body);

}  // namespace evenfeed::cli
