#include "cuda/device_info.h"

#include <gtest/gtest.h>

namespace evenfeed {
namespace {

TEST(DeviceInfo, QueryRunsWithOrWithoutAGpu) {
  GpuInfo info = query_gpus();
  if (built_with_cuda()) {
    EXPECT_GE(info.runtime_version, 12000);  // the toolkit we build against
    EXPECT_GT(info.nccl_version, 0);         // NCCL linked and answering
  }
  if (info.devices.empty()) {
    EXPECT_FALSE(info.no_gpu_reason.empty());
  }
}

TEST(DeviceInfo, ReportsEveryVisibleGpu) {
  GpuInfo info = query_gpus();
  if (info.devices.empty()) GTEST_SKIP() << "no GPU visible: " << info.no_gpu_reason;
  for (const GpuDevice& d : info.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GE(d.compute_major, 7);
  }
}

TEST(DeviceInfo, VersionStrings) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
}

}  // namespace
}  // namespace evenfeed
