// What the machine offers on the GPU side: visible devices, CUDA runtime and driver
// versions, NCCL version. Safe on machines without a GPU or driver: no devices are
// reported and nothing throws, so every binary runs there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evenfeed {

struct GpuDevice {
  int index = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
};

struct GpuInfo {
  std::vector<GpuDevice> devices;
  int runtime_version = 0;    // e.g. 13000 for CUDA 13.0
  int driver_version = 0;     // 0 when no driver is installed
  int nccl_version = 0;       // e.g. 22703 for NCCL 2.27.3
  std::string no_gpu_reason;  // why devices is empty, when it is
};

// True when this build compiled cuda/ with nvcc.
bool built_with_cuda();
GpuInfo query_gpus();
// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace evenfeed
