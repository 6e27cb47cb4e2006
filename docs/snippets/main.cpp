// Runs every snippet of docs/embedding.md on an image and a token dataset and checks
// what the guide says of them: a resumed epoch (at the same or another world size)
// serves exactly the samples the interrupted one had not, and the DDP mean is the
// same whatever the number of ranks (the test runs this alone and under mpirun).
//
//   docs_snippets IMAGE_DATASET TOKEN_DATASET
#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>

#include "docs/snippets/snippets.h"

namespace {

constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();

std::vector<uint64_t> sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Serves 2 steps at world size 2, saves, restores, and finishes at `resume_world`.
bool resume_serves_the_rest(const evenfeed::Dataset& dataset, uint32_t resume_world) {
  const evenfeed::PlanState start{3, 1, {}};
  std::vector<uint64_t> full, served;
  for (uint32_t r = 0; r < 2; ++r) {
    auto all = snippets::load_epoch(dataset, r, 2, start, kAll);
    auto first = snippets::load_epoch(dataset, r, 2, start, 2);
    full.insert(full.end(), all.begin(), all.end());
    served.insert(served.end(), first.begin(), first.end());
  }
  evenfeed::PlanState interrupted = start;
  interrupted.advance(2, 2);
  const evenfeed::PlanState restored = snippets::restore_state(snippets::save_state(interrupted));
  for (uint32_t r = 0; r < resume_world; ++r) {
    auto rest = snippets::load_epoch(dataset, r, resume_world, restored, kAll);
    served.insert(served.end(), rest.begin(), rest.end());
  }
  return sorted(full) == sorted(served);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: docs_snippets IMAGE_DATASET TOKEN_DATASET\n");
    return 2;
  }
  try {
    bool ok = true;
    for (const char* dir : {argv[1], argv[2]}) {
      snippets::open_dataset(dir);
      evenfeed::Dataset dataset(dir);
      for (uint32_t world : {2u, 3u}) {
        const bool same = resume_serves_the_rest(dataset, world);
        std::printf("resume at world size %u: %s\n", world,
                    same ? "every sample once" : "MISMATCH");
        ok = ok && same;
      }
    }
    evenfeed::Dataset images(argv[1]);
    const uint64_t batches = snippets::feed_device(images);
    const uint64_t expected = (images.size() + 31) / 32;
    std::printf("fed %llu batches to the device\n", static_cast<unsigned long long>(batches));
    ok = ok && batches == expected;
    std::printf("ddp mean label %.6f\n", snippets::ddp_epoch(images, 0));
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "docs_snippets: error: %s\n", e.what());
    return 1;
  }
}
