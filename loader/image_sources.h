// Finding the inputs of `convert images`: an ImageFolder tree (one subfolder per
// class, classes numbered in sorted name order, files in sorted path order) or a list
// file of `path label` lines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evenfeed {

struct ImageInput {
  std::filesystem::path path;  // absolute or relative to the working directory
  std::string source;          // as stored in the index: relative to SRC, or as listed
  int32_t label = -1;
};

struct ImageSources {
  std::vector<ImageInput> inputs;
  std::vector<std::string> classes;  // folder trees only
  std::string format;                // "imagefolder" or "imagelist"
  uint64_t total_bytes = 0;          // sum of file sizes, for shard sizing
  std::vector<std::string> warnings;
};

// SRC is a directory (ImageFolder) or a regular file (list). Hidden files and folders
// (names starting with '.') are ignored, and in a tree so are files without an image
// extension (as torchvision's ImageFolder does; a warning counts them). A list's
// entries are all taken, whatever their names. Throws Error on a missing SRC, an empty tree,
// or a malformed list line (naming the line).
ImageSources find_image_sources(const std::filesystem::path& src);

}  // namespace evenfeed
