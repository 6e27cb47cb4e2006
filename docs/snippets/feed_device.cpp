#include "cuda/device_feeder.h"
#include "cuda/normalize.h"
#include "docs/snippets/snippets.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"

namespace snippets {

// [snippet:feed_device]
uint64_t feed_device(const evenfeed::Dataset& dataset) {
  evenfeed::LoaderOptions options;  // uint8 NHWC into pinned slots: 4x fewer bytes to copy
  options.image.size = 64;
  auto plan = plan_epoch(dataset, 1, {1, 0, {}});
  evenfeed::Loader loader(dataset, options, 0, evenfeed::batches_of_rank(*plan, 0));

  // Your compute stream; the feeder reuses a device buffer only after the work queued
  // on it so far. Output: bfloat16 NCHW on the GPU (float32 on the host without one).
  const bool gpu = evenfeed::gpu_visible();
  evenfeed::GpuStream stream = gpu ? evenfeed::gpu_stream_create() : nullptr;
  const size_t max_out = 32 * 3 * 64 * 64;
  void* device_out = gpu ? evenfeed::gpu_device_alloc(max_out * 2) : nullptr;
  std::vector<float> host_out(max_out);

  uint64_t batches = 0;
  {  // the feeder (and its copies) end before the stream does
    // The feeder pulls host batches; the shared_ptr keeps each loader slot until its copy
    // has finished.
    evenfeed::FeederOptions feeder_options;
    feeder_options.compute_stream = stream;
    evenfeed::DeviceFeeder feeder(
        [&]() -> std::optional<evenfeed::HostBatch> {
          auto batch = loader.next();
          if (!batch) return std::nullopt;
          auto owner = std::make_shared<evenfeed::Batch>(std::move(*batch));
          const size_t n = owner->size();
          evenfeed::HostBatch host{owner->index(), {}, owner};
          host.parts.push_back(std::as_bytes(std::span(owner->images_uint8(), n * 64 * 64 * 3)));
          host.parts.push_back(std::as_bytes(owner->labels()));
          return host;
        },
        feeder_options);

    while (auto batch = feeder.next()) {
      const auto* images = static_cast<const uint8_t*>(batch->part(0));
      const evenfeed::ImageBatchShape shape{batch->part_bytes(0) / (64 * 64 * 3), 64, 64};
      if (batch->on_device()) {
        batch->wait_on(stream);  // the stream waits for the copy; the host does not
        evenfeed::normalize_on_gpu(images, shape, nullptr, {}, evenfeed::DataType::kBFloat16,
                                   device_out, stream);
        // ... your forward and backward, queued on `stream`
      } else {  // pass-through: `images` is the loader's host memory
        evenfeed::normalize_reference(images, shape, nullptr, {}, evenfeed::DataType::kFloat32,
                                      host_out.data());
      }
      ++batches;
    }
  }
  if (gpu) {
    evenfeed::gpu_stream_synchronize(stream);
    evenfeed::gpu_device_free(device_out);
    evenfeed::gpu_stream_destroy(stream);
  }
  return batches;
}
// [/snippet]

}  // namespace snippets
