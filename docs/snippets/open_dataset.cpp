#include <cstdio>

#include "docs/snippets/snippets.h"

namespace snippets {

// [snippet:open_dataset]
void open_dataset(const std::filesystem::path& dir) {
  evenfeed::Dataset dataset(dir);  // throws evenfeed::Error naming what is wrong
  const evenfeed::Manifest& m = dataset.manifest();
  std::printf("%llu samples in %zu shards, %zu classes\n",
              static_cast<unsigned long long>(dataset.size()), m.shards.size(), m.classes.size());
  // Per-sample lengths (bytes of JPEG, or tokens) and labels, memory-mapped.
  std::span<const uint64_t> lengths = dataset.index().lengths();
  std::printf("sample 0: %llu long, label %d\n", static_cast<unsigned long long>(lengths[0]),
              dataset.index().labels()[0]);
}
// [/snippet]

}  // namespace snippets
