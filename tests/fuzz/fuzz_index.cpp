// Fuzz target: index.bin, mapped and then read entry by entry as the planner and the
// loader do. A damaged index must be refused with an evenfeed::Error when mapped.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "loader/index.h"
#include "tests/fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = evenfeed::fuzz::write_input("index.bin", data, size);
  try {
    evenfeed::IndexReader index(path);
    uint64_t sum = 0;
    for (uint64_t id = 0; id < std::min<uint64_t>(index.size(), 4096); ++id) {
      const evenfeed::IndexEntry e = index.entry(id);
      sum += e.length + static_cast<uint64_t>(e.label) + e.width + e.height;
      sum += index.source_name(id).size();
    }
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const evenfeed::Error&) {
  }
  return 0;
}
