// Fuzz target: checkpoint files (docs/checkpoint.md), which `train --resume` reads from
// wherever the user points it. A damaged file must be an evenfeed::Error.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "tests/fuzz/fuzz_input_file.h"
#include "trainer/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = evenfeed::fuzz::write_input("checkpoint.evf", data, size);
  try {
    evenfeed::Checkpoint c = evenfeed::read_checkpoint(path);
    (void)c.meta.dump();
  } catch (const evenfeed::Error&) {
  }
  return 0;
}
