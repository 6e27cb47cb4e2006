// A program outside the repository: it includes the installed headers by their
// package path, reads one epoch of a dataset on rank 0 of 2, and prints what it saw.
#include <cstdio>
#include <exception>

#include <evenfeed/loader/dataset.h>
#include <evenfeed/loader/loader.h>
#include <evenfeed/sampler/distributed_sampler.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer DATASET_DIR\n");
    return 2;
  }
  try {
    evenfeed::Dataset dataset(argv[1]);
    evenfeed::SamplerOptions sampler;
    sampler.batch_size = 8;
    evenfeed::LoaderOptions options;
    options.image.size = 32;
    evenfeed::PlanState state{1, 0, {}};
    evenfeed::DistributedSampler plan(dataset.size(), 2, sampler, state);
    evenfeed::Loader loader(dataset, options, 0, evenfeed::batches_of_rank(plan, 0));
    size_t samples = 0;
    while (auto batch = loader.next()) samples += batch->size();
    std::printf("consumer: %zu samples of %llu\n", samples,
                static_cast<unsigned long long>(dataset.size()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
    return 1;
  }
}
