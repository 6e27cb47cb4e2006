// CUDA_CHECK and NCCL_CHECK: every CUDA runtime and NCCL call goes through one of
// these, turning a failure into an evenfeed::Error naming the call and the cause.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "core/error.h"

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    cudaError_t cuda_rc_ = (call);                                                        \
    if (cuda_rc_ != cudaSuccess) {                                                        \
      ::evenfeed::fail("CUDA {} failed: {} ({}:{})", #call, cudaGetErrorString(cuda_rc_), \
                       __FILE__, __LINE__);                                               \
    }                                                                                     \
  } while (0)

#define NCCL_CHECK(call)                                                                  \
  do {                                                                                    \
    ncclResult_t nccl_rc_ = (call);                                                       \
    if (nccl_rc_ != ncclSuccess) {                                                        \
      ::evenfeed::fail("NCCL {} failed: {} ({}:{})", #call, ncclGetErrorString(nccl_rc_), \
                       __FILE__, __LINE__);                                               \
    }                                                                                     \
  } while (0)
