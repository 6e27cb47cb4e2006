#include <png.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/philox.h"
#include "tests/support/fixtures.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace evenfeed::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/evenfeed-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {
std::vector<unsigned char> smooth_picture(int width, int height, int channels) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double dx = x - width * 0.5, dy = y - height * 0.45, r = 0.3 * std::min(width, height);
      const bool disc = dx * dx + dy * dy < r * r;
      for (int c = 0; c < channels; ++c) {
        const double v = disc ? 40 + 50 * c : 255.0 * (x + c * y) / (width + c * height);
        pixels[(static_cast<size_t>(y) * width + x) * channels + c] =
            static_cast<unsigned char>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return pixels;
}

std::vector<unsigned char> picture(int width, int height, int channels, uint64_t seed) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  CounterRng rng(seed, RngStream::kSynth, 9, 0);
  const int fx = 1 + static_cast<int>(rng.below(7)), fy = 1 + static_cast<int>(rng.below(7));
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        pixels[(static_cast<size_t>(y) * width + x) * channels + c] = static_cast<unsigned char>(
            (x * fx * (c + 1) + y * fy * (3 - c % 3) + seed * 37) & 0xff);
      }
    }
  }
  return pixels;
}
}  // namespace

std::vector<std::byte> make_jpeg(const JpegSpec& s) {
  tjhandle h = tjInitCompress();
  auto pixels = s.smooth ? smooth_picture(s.width, s.height, tjPixelSize[s.pixel_format])
                         : picture(s.width, s.height, tjPixelSize[s.pixel_format], s.seed);
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  int subsampling = s.pixel_format == TJPF_GRAY ? TJSAMP_GRAY : s.subsampling;
  int rc = tjCompress2(h, pixels.data(), s.width, 0, s.height, s.pixel_format, &jpeg, &size,
                       subsampling, s.quality, s.progressive ? TJFLAG_PROGRESSIVE : 0);
  tjDestroy(h);
  if (rc != 0) throw std::runtime_error("tjCompress2 failed");
  std::vector<std::byte> out(size);
  std::memcpy(out.data(), jpeg, size);
  tjFree(jpeg);
  return out;
}

std::vector<std::byte> drop_jpeg_segments(const std::vector<std::byte>& jpeg,
                                          unsigned char marker) {
  std::vector<std::byte> out(jpeg.begin(), jpeg.begin() + 2);
  size_t i = 2;
  while (i + 4 <= jpeg.size() && jpeg[i + 1] != std::byte{0xDA}) {
    const size_t length =
        (std::to_integer<size_t>(jpeg[i + 2]) << 8) | std::to_integer<size_t>(jpeg[i + 3]);
    if (jpeg[i + 1] != std::byte{marker})
      out.insert(out.end(), jpeg.begin() + static_cast<long>(i),
                 jpeg.begin() + static_cast<long>(i + 2 + length));
    i += 2 + length;
  }
  out.insert(out.end(), jpeg.begin() + static_cast<long>(i), jpeg.end());
  return out;
}

std::vector<std::byte> make_png(int width, int height, uint64_t seed) {
  auto pixels = picture(width, height, 3, seed);
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr);
  std::vector<std::byte> out(size);
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels.data(), 0, nullptr)) {
    throw std::runtime_error("png write failed");
  }
  out.resize(size);
  return out;
}

std::vector<std::byte> make_png16_grey(int width, int height, uint16_t value) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::vector<std::byte> out;
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, size_t length) {
        auto* bytes = static_cast<std::vector<std::byte>*>(png_get_io_ptr(p));
        const auto* from = reinterpret_cast<const std::byte*>(data);
        bytes->insert(bytes->end(), from, from + length);
      },
      nullptr);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 16,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  std::vector<uint8_t> row(static_cast<size_t>(width) * 2);
  for (int x = 0; x < width; ++x) {  // PNG samples are big-endian
    row[2 * x] = static_cast<uint8_t>(value >> 8);
    row[2 * x + 1] = static_cast<uint8_t>(value & 0xFF);
  }
  for (int y = 0; y < height; ++y) png_write_row(png, row.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path);
  f << text;
}

// splitmix64 of `x`, to [0, 1).
static double splitmix_uniform(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<double>((x ^ (x >> 31)) >> 11) * 0x1.0p-53;
}

std::vector<uint64_t> lumpy_lengths(size_t n) {
  std::vector<uint64_t> lengths;
  for (uint64_t i = 0; i < n; ++i) {
    const double u1 = splitmix_uniform(3 * i), u2 = splitmix_uniform(3 * i + 1),
                 kind = splitmix_uniform(3 * i + 2);
    const double normal = std::sqrt(-2 * std::log(1 - u1)) * std::cos(6.283185307179586 * u2);
    double l = 40 * std::exp(normal);
    if (kind < 0.03) l = 1000 + u2 * 6000;
    if (kind < 0.004) l = 9000;
    lengths.push_back(std::max<uint64_t>(1, static_cast<uint64_t>(l)));
  }
  return lengths;
}

std::vector<uint64_t> log_normal_file_lengths(size_t n, double median, double sigma) {
  std::vector<uint64_t> lengths;
  for (uint64_t i = 0; i < n; ++i) {
    const double u1 = splitmix_uniform(4 * i), u2 = splitmix_uniform(4 * i + 1);
    const double normal = std::sqrt(-2 * std::log(1 - u1)) * std::cos(6.283185307179586 * u2);
    lengths.push_back(
        std::max<uint64_t>(1, static_cast<uint64_t>(median * std::exp(sigma * normal))));
  }
  return lengths;
}

std::vector<std::byte> read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(f)), {});
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

void make_image_tree(const fs::path& root, int classes, int per_class) {
  const int subsamplings[] = {TJSAMP_420, TJSAMP_444, TJSAMP_422, TJSAMP_440, TJSAMP_411};
  int n = 0;
  for (int c = 0; c < classes; ++c) {
    for (int k = 0; k < per_class; ++k, ++n) {
      JpegSpec s;
      s.width = 17 + (n * 13) % 90;
      s.height = 11 + (n * 29) % 70;
      s.subsampling = subsamplings[n % 5];
      s.progressive = n % 3 == 1;
      s.pixel_format = n % 7 == 3 ? TJPF_GRAY : n % 11 == 5 ? TJPF_CMYK : TJPF_RGB;
      s.seed = static_cast<uint64_t>(n);
      write_file(root / ("class" + std::to_string(c)) / ("img" + std::to_string(k) + ".jpg"),
                 make_jpeg(s));
    }
  }
}

CommandResult run_command(const std::string& command) {
  TempDir scratch;
  const fs::path out = scratch / "out", err = scratch / "err";
  const std::string full = command + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream o(out), e(err);
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// The build's evenfeed, or EVENFEED_BIN where the tests run away from the build tree
// (scripts/gpu-check.sh, on a GPU machine, runs them from an unpacked bundle).
std::string evenfeed_bin() {
  const char* moved = std::getenv("EVENFEED_BIN");
  return "'" + std::string(moved != nullptr && *moved != '\0' ? moved : EVENFEED_BIN) + "'";
}

}  // namespace evenfeed::testing
