// MPI_CHECK: every MPI call goes through it, turning a failure into an evenfeed::Error
// naming the call and MPI's own description of the cause. Only works on communicators
// whose error handler returns errors (MPI_ERRORS_RETURN), which ours set.
#pragma once

#include <mpi.h>

#include <string>

#include "core/error.h"

namespace evenfeed {

// MPI's text for an error code, e.g. "MPI_ERR_TRUNCATE: message truncated".
std::string mpi_error_text(int code);

}  // namespace evenfeed

#define MPI_CHECK(call)                                                                         \
  do {                                                                                          \
    int mpi_rc_ = (call);                                                                       \
    if (mpi_rc_ != MPI_SUCCESS) {                                                               \
      ::evenfeed::fail("MPI {} failed: {} ({}:{})", #call, ::evenfeed::mpi_error_text(mpi_rc_), \
                       __FILE__, __LINE__);                                                     \
    }                                                                                           \
  } while (0)
