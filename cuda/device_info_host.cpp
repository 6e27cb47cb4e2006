// The host-only build of device_info (nvcc not found at configure time): no devices.
#include "cuda/device_info.h"

#include <fmt/format.h>

namespace evenfeed {

bool built_with_cuda() {
  return false;
}

GpuInfo query_gpus() {
  GpuInfo info;
  info.no_gpu_reason = "evenfeed was built without CUDA (nvcc not found)";
  return info;
}

std::string cuda_version_string(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace evenfeed
