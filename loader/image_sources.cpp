#include "loader/image_sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <span>
#include <string_view>

#include "core/error.h"
#include "core/text_input.h"
#include "loader/jpeg_probe.h"

namespace evenfeed {
namespace fs = std::filesystem;
namespace {

bool hidden(const fs::path& p) {
  return p.filename().string().starts_with(".");
}

// What torchvision's ImageFolder takes, so a tree that works there finds the same
// files here. Anything else (a README, Thumbs.db, a labels.csv) is not an input.
bool image_extension(const fs::path& p) {
  static constexpr std::string_view kImageExtensions[] = {".jpg", ".jpeg", ".jpe", ".jfif", ".png",
                                                          ".ppm", ".pgm",  ".pbm", ".bmp",  ".gif",
                                                          ".tif", ".tiff", ".webp"};
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(std::begin(kImageExtensions), std::end(kImageExtensions), ext) !=
         std::end(kImageExtensions);
}

uint64_t size_or_zero(const fs::path& p) {
  std::error_code ec;
  uint64_t size = fs::file_size(p, ec);
  return ec ? 0 : size;
}

ImageSources scan_folder(const fs::path& src) {
  ImageSources out;
  out.format = "imagefolder";
  std::vector<fs::path> class_dirs;
  uint64_t loose_files = 0, not_images = 0;
  std::string first_not_image;
  for (const auto& entry : fs::directory_iterator(src)) {
    if (hidden(entry.path())) continue;
    if (entry.is_directory())
      class_dirs.push_back(entry.path());
    else
      ++loose_files;
  }
  std::sort(class_dirs.begin(), class_dirs.end());
  if (loose_files > 0) {
    out.warnings.push_back(
        fmt::format("ignored {} file(s) directly inside {}: an ImageFolder tree "
                    "keeps images in one subfolder per class",
                    loose_files, src.string()));
  }
  for (size_t label = 0; label < class_dirs.size(); ++label) {
    out.classes.push_back(class_dirs[label].filename().string());
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(class_dirs[label]);
         it != fs::recursive_directory_iterator(); ++it) {
      if (hidden(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      if (image_extension(it->path())) {
        files.push_back(it->path());
      } else if (not_images++ == 0) {
        first_not_image = fs::relative(it->path(), src).string();
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      out.inputs.push_back({f, fs::relative(f, src).string(), static_cast<int32_t>(label)});
      out.total_bytes += size_or_zero(f);
    }
  }
  const std::string passed_over =
      not_images > 0 ? fmt::format("{} file(s) without an image extension (first: {})", not_images,
                                   first_not_image)
                     : std::string();
  if (not_images > 0) {
    out.warnings.push_back(
        fmt::format("ignored {}; images are taken by extension (.jpg, .jpeg, "
                    ".png, ...), as torchvision's ImageFolder does",
                    passed_over));
  }
  EVENFEED_CHECK(!out.inputs.empty(),
                 "{}: no images found{}; an ImageFolder tree needs one subfolder per class "
                 "with images (.jpg, .jpeg, .png, ...) inside",
                 src.string(), not_images > 0 ? " (ignored " + passed_over + ")" : std::string());
  return out;
}

ImageSources read_list(const fs::path& list) {
  ImageSources out;
  out.format = "imagelist";
  std::ifstream in(list);
  EVENFEED_CHECK(in.good(), "{}: cannot read the list file", list.string());
  const fs::path base = list.parent_path();
  std::string line;
  for (uint64_t number = 1; std::getline(in, line); ++number) {
    if (number == 1) drop_byte_order_mark(line);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    // `path label`; the path may contain spaces, so the label is the last field.
    size_t split = line.find_last_of(" \t");
    EVENFEED_CHECK(split != std::string::npos, "{}:{}: expected `path label`, got '{}'",
                   list.string(), number, excerpt(line));
    std::string path = line.substr(0, split);
    while (!path.empty() && (path.back() == ' ' || path.back() == '\t')) path.pop_back();
    const std::string label_text = line.substr(split + 1);
    int32_t label = 0;
    auto [end, ec] =
        std::from_chars(label_text.data(), label_text.data() + label_text.size(), label);
    EVENFEED_CHECK(ec == std::errc() && end == label_text.data() + label_text.size() && label >= 0,
                   "{}:{}: label '{}' is not a non-negative integer", list.string(), number,
                   excerpt(label_text));
    fs::path resolved = fs::path(path).is_absolute() ? fs::path(path) : base / path;
    out.inputs.push_back({resolved, path, label});
    out.total_bytes += size_or_zero(resolved);
  }
  EVENFEED_CHECK(!out.inputs.empty(), "{}: the list names no images", list.string());
  return out;
}

}  // namespace

ImageSources find_image_sources(const fs::path& src) {
  std::error_code ec;
  EVENFEED_CHECK(fs::exists(src, ec), "{}: no such file or directory", src.string());
  if (fs::is_directory(src, ec)) return scan_folder(src);
  // A common slip: one image given where the tree or the list belongs. BMP's and PPM's
  // magic ("BM", "P1"-"P6") can begin a list's first path too, so those count only with
  // the control bytes of a binary header.
  std::array<char, 16> head{};
  std::ifstream in(src, std::ios::binary);
  in.read(head.data(), head.size());
  const std::span<const char> read(head.data(), static_cast<size_t>(in.gcount()));
  const std::string format = sniff_image_format(std::as_bytes(read));
  const bool binary = std::any_of(read.begin(), read.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F;
  });
  EVENFEED_CHECK(format.empty() || ((format == "BMP" || format == "PPM") && !binary),
                 "{}: is a {} image, not a folder or a list; SRC is an ImageFolder tree "
                 "(one subfolder per class) or a list file of `path label` lines",
                 src.string(), format);
  return read_list(src);
}

}  // namespace evenfeed
