#include "docs/snippets/snippets.h"
#include "loader/loader.h"

namespace snippets {

// [snippet:load_epoch]
std::vector<uint64_t> load_epoch(const evenfeed::Dataset& dataset, uint32_t rank, uint32_t world,
                                 evenfeed::PlanState state, uint64_t stop_after_steps) {
  evenfeed::LoaderOptions options;  // RandomResizedCrop + flip, uint8 NHWC, every core
  options.seed = state.seed;        // crops and flips: (seed, epoch, sample id)
  options.image.size = 64;
  auto plan = plan_epoch(dataset, world, state);
  evenfeed::Loader loader(dataset, options, state.epoch, evenfeed::batches_of_rank(*plan, rank));

  std::vector<uint64_t> seen;
  for (uint64_t step = 0; step < stop_after_steps; ++step) {
    std::optional<evenfeed::Batch> batch = loader.next();  // in plan order
    if (!batch) break;                                     // end of the epoch
    // Images: batch->images_uint8(), size() x 64 x 64 x 3. Tokens: batch->tokens(),
    // size() x max_length(), with lengths() and mask(). Padding slots (the last
    // global batch of a sampler epoch) have valid()[i] == 0.
    for (size_t i = 0; i < batch->size(); ++i)
      if (batch->valid().empty() || batch->valid()[i]) seen.push_back(batch->sample_ids()[i]);
    state.advance(world, 1);  // one more step served by every rank
  }  // each Batch returns its slot to the loader's pool when it goes out of scope
  return seen;
}
// [/snippet]

}  // namespace snippets
