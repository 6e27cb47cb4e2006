// Fuzz target: evenfeed.json. Bad manifests must be an evenfeed::Error, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "loader/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    evenfeed::Manifest m = evenfeed::Manifest::from_json(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)m.to_json();
  } catch (const evenfeed::Error&) {
  }
  return 0;
}
