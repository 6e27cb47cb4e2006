#include "tools/ranked.h"

#include <cstdio>

#include "core/error.h"
#include "core/interrupt.h"

namespace evenfeed::cli {

int run_as_rank(const std::function<int(MpiRuntime& mpi)>& body) {
  MpiRuntime mpi;
  if (mpi.world_size() == 1) return body(mpi);  // errors go to main() as usual
  try {
    return body(mpi);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evenfeed: error: rank %d of %d: %s\n", mpi.rank(), mpi.world_size(),
                 e.what());
    std::fflush(stderr);
    mpi.abort(interrupted() ? 130 : 1);
  }
}

}  // namespace evenfeed::cli
