#include <fmt/format.h>

#include "cuda/cuda_check.h"
#include "cuda/device_info.h"

namespace evenfeed {

bool built_with_cuda() {
  return true;
}

GpuInfo query_gpus() {
  GpuInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);
  ncclGetVersion(&info.nccl_version);
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    info.no_gpu_reason = cudaGetErrorString(rc);
    cudaGetLastError();  // clear the sticky error so later calls are not confused
    return info;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    info.devices.push_back({d, prop.name, prop.totalGlobalMem, prop.major, prop.minor});
  }
  if (count == 0) info.no_gpu_reason = "no CUDA devices visible";
  return info;
}

std::string cuda_version_string(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace evenfeed
