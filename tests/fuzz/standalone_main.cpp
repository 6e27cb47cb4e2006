// Runs a fuzz target over files without libFuzzer: every file named on the command
// line, or every file in a directory named there. The normal build runs each target
// over its seed corpus and the crashes found so far (tests/fuzz/corpus/<target>/),
// so every crash found by fuzzing stays a regression test in every build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  size_t runs = 0;
  auto run = [&](const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++runs;
  };
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      // In name order, so inputs that need a predecessor (a decoder's leftover state)
      // meet it every time.
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) run(f);
    } else {
      run(p);
    }
  }
  std::printf("%zu inputs ran without a crash\n", runs);
  return runs > 0 ? 0 : 1;
}
