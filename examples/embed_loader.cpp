// Feeding a C++ training loop with evenfeed: open a dataset, plan this rank's share of
// each epoch, load its batches, and keep the few integers that resume the epoch.
//
//   embed_loader DATASET_DIR [RANK WORLD_SIZE]
//
// Copy this into your trainer: replace train_step() with your forward/backward, and
// store `state` in your checkpoints (PlanState::to_json / from_json).
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "loader/dataset.h"
#include "loader/loader.h"
#include "sampler/distributed_sampler.h"

namespace {

// Stands in for a model step: here, just touch every pixel and label.
double train_step(const evenfeed::Batch& batch, int image_size) {
  const size_t pixels = batch.size() * static_cast<size_t>(image_size) * image_size * 3;
  double sum = 0;
  for (size_t i = 0; i < pixels; ++i) sum += batch.images_uint8()[i];
  for (int32_t label : batch.labels()) sum += label;
  return sum / static_cast<double>(pixels);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s DATASET_DIR [RANK WORLD_SIZE]\n", argv[0]);
    return 2;
  }
  try {
    const uint32_t rank = argc == 4 ? static_cast<uint32_t>(std::atoi(argv[2])) : 0;
    const uint32_t world = argc == 4 ? static_cast<uint32_t>(std::atoi(argv[3])) : 1;
    evenfeed::Dataset dataset(argv[1]);

    evenfeed::SamplerOptions sampler;  // 32 samples per rank per step
    sampler.batch_size = 32;
    evenfeed::LoaderOptions options;  // RandomResizedCrop(224) + flip, uint8 NHWC
    options.seed = 42;

    uint64_t samples = 0, batches = 0;
    double checksum = 0;
    for (uint32_t epoch = 0; epoch < 2; ++epoch) {
      // The epoch is an explicit argument: every epoch has its own order.
      evenfeed::PlanState state{options.seed, epoch, {}};
      evenfeed::DistributedSampler plan(dataset.size(), world, sampler, state);
      evenfeed::Loader loader(dataset, options, epoch, evenfeed::batches_of_rank(plan, rank));
      while (auto batch = loader.next()) {  // in plan order; the slot returns when `batch` dies
        checksum += train_step(*batch, options.image.size);
        samples += batch->size();
        ++batches;
        state.advance(world, 1);  // checkpoint `state.to_json()` to resume exactly here
      }
    }
    std::printf("rank %u of %u: %llu batches, %llu samples, mean pixel %.2f\n", rank, world,
                static_cast<unsigned long long>(batches), static_cast<unsigned long long>(samples),
                checksum / static_cast<double>(batches));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed_loader: error: %s\n", e.what());
    return 1;
  }
}
