#include "loader/synth.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numbers>
#include <string>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/philox.h"
#include "core/staging_dir.h"
#include "loader/jpeg_encode.h"

namespace evenfeed {
namespace fs = std::filesystem;
namespace {

constexpr std::array<const char*, 5> kShapes = {"disc", "square", "triangle", "ring", "cross"};

struct Rgb {
  double r, g, b;
};

Rgb hsv(double hue_degrees, double s, double v) {
  double h = std::fmod(hue_degrees, 360.0) / 60.0;
  double c = v * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = v - c;
  Rgb out{0, 0, 0};
  switch (static_cast<int>(h)) {
    case 0:
      out = {c, x, 0};
      break;
    case 1:
      out = {x, c, 0};
      break;
    case 2:
      out = {0, c, x};
      break;
    case 3:
      out = {0, x, c};
      break;
    case 4:
      out = {x, 0, c};
      break;
    default:
      out = {c, 0, x};
      break;
  }
  return {(out.r + m) * 255, (out.g + m) * 255, (out.b + m) * 255};
}

// Inside test for a shape in its own frame, where the figure spans [-1, 1].
bool inside(int shape, double u, double v) {
  switch (shape) {
    case 0:
      return u * u + v * v <= 1.0;
    case 1:
      return std::fabs(u) <= 0.8 && std::fabs(v) <= 0.8;
    case 2:
      return v <= 0.8 && v >= -1.0 + 2.0 * std::fabs(u) * 0.9;
    case 3: {
      double r2 = u * u + v * v;
      return r2 <= 1.0 && r2 >= 0.36;
    }
    default:
      return (std::fabs(u) <= 0.28 && std::fabs(v) <= 1.0) ||
             (std::fabs(v) <= 0.28 && std::fabs(u) <= 1.0);
  }
}

std::string class_name(int label) {
  return fmt::format("{:02d}_{}", label, kShapes[label % kShapes.size()]);
}

// Draws image `i` of class `label` into `pixels` (RGB) and picks its encoding.
void draw(uint64_t seed, uint64_t i, int label, int classes, const SynthImagesOptions& o,
          int& width, int& height, std::vector<unsigned char>& pixels, JpegEncodeOptions& encode,
          bool& grey) {
  CounterRng rng(seed, RngStream::kSynth, 0, i);
  const int shorter =
      o.min_size + static_cast<int>(rng.below(static_cast<uint64_t>(o.max_size - o.min_size + 1)));
  const double aspect = std::exp(rng.uniform(std::log(0.6), std::log(1.7)));
  width = aspect >= 1 ? static_cast<int>(shorter * aspect) : shorter;
  height = aspect >= 1 ? shorter : static_cast<int>(shorter / aspect);
  const Rgb bg0 = hsv(rng.uniform(0, 360), rng.uniform(0, 0.25), rng.uniform(0.3, 0.9));
  const Rgb bg1 = hsv(rng.uniform(0, 360), rng.uniform(0, 0.25), rng.uniform(0.3, 0.9));
  const Rgb fg = hsv(360.0 * label / classes + rng.uniform(-8, 8), rng.uniform(0.7, 1.0),
                     rng.uniform(0.75, 1.0));
  const double gradient_angle = rng.uniform(0, 2 * std::numbers::pi);
  const double gx = std::cos(gradient_angle), gy = std::sin(gradient_angle);
  const double radius = std::min(width, height) * rng.uniform(0.22, 0.38);
  const double cx = width * rng.uniform(0.4, 0.6), cy = height * rng.uniform(0.4, 0.6);
  const double rot = rng.uniform(0, 2 * std::numbers::pi), cr = std::cos(rot), sr = std::sin(rot);
  const int shape = label % static_cast<int>(kShapes.size());
  pixels.resize(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double t = 0.5 + 0.5 * ((x - width / 2.0) * gx + (y - height / 2.0) * gy) /
                           (0.5 * std::hypot(width, height));
      double noise =
          static_cast<double>(mix64(seed ^ (i << 32) ^ (static_cast<uint64_t>(y) << 16) ^ x) % 25) -
          12;
      double dx = (x - cx) / radius, dy = (y - cy) / radius;
      bool in = inside(shape, dx * cr - dy * sr, dx * sr + dy * cr);
      Rgb c = in ? fg
                 : Rgb{bg0.r + (bg1.r - bg0.r) * t, bg0.g + (bg1.g - bg0.g) * t,
                       bg0.b + (bg1.b - bg0.b) * t};
      unsigned char* p = &pixels[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<unsigned char>(std::clamp(c.r + noise, 0.0, 255.0));
      p[1] = static_cast<unsigned char>(std::clamp(c.g + noise, 0.0, 255.0));
      p[2] = static_cast<unsigned char>(std::clamp(c.b + noise, 0.0, 255.0));
    }
  }
  encode.quality = 70 + static_cast<int>(rng.below(26));
  const double s = rng.uniform();
  encode.subsampling = s < 0.7 ? TJSAMP_420 : s < 0.85 ? TJSAMP_444 : TJSAMP_422;
  grey = rng.uniform() < 0.03;
  encode.progressive = rng.uniform() < 0.25;
}

}  // namespace

uint64_t synth_images(const fs::path& out, const SynthImagesOptions& o) {
  EVENFEED_CHECK(o.count > 0, "--count must be positive");
  EVENFEED_CHECK(o.classes >= 1 && o.classes <= 1000, "--classes must be 1-1000, got {}",
                 o.classes);
  EVENFEED_CHECK(o.min_size >= 8 && o.max_size >= o.min_size && o.max_size <= 8192,
                 "image sizes must satisfy 8 <= min <= max <= 8192");
  StagingDir staging(out, o.force);
  for (int c = 0; c < o.classes; ++c) fs::create_directories(staging.path() / class_name(c));
  struct Scratch {
    // libjpeg-turbo 2.1.5 keeps a progressive scan script in a compressor after a
    // progressive encode, corrupting later baseline encodes on that handle: keep one
    // handle for each mode.
    TjHandle baseline{TjHandle::Mode::kCompress};
    TjHandle progressive{TjHandle::Mode::kCompress};
    std::vector<unsigned char> pixels, grey;
    std::vector<std::byte> jpeg;
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  tbb::task_arena arena(o.threads > 0 ? o.threads : tbb::info::default_concurrency());
  arena.execute([&] {
    tbb::parallel_for(uint64_t{0}, o.count, [&](uint64_t i) {
      if (interrupted()) return;
      Scratch& s = scratch.local();
      const int label = static_cast<int>(i % static_cast<uint64_t>(o.classes));
      int width = 0, height = 0;
      JpegEncodeOptions encode;
      bool grey = false;
      draw(o.seed, i, label, o.classes, o, width, height, s.pixels, encode, grey);
      const TjHandle& compressor = encode.progressive ? s.progressive : s.baseline;
      if (grey) {
        s.grey.resize(static_cast<size_t>(width) * height);
        for (size_t k = 0; k < s.grey.size(); ++k) {
          s.grey[k] = static_cast<unsigned char>(
              (s.pixels[3 * k] * 77 + s.pixels[3 * k + 1] * 150 + s.pixels[3 * k + 2] * 29) >> 8);
        }
        encode_jpeg(compressor, s.grey.data(), width, height, TJPF_GRAY, encode, s.jpeg);
      } else {
        encode_jpeg(compressor, s.pixels.data(), width, height, TJPF_RGB, encode, s.jpeg);
      }
      const fs::path file = staging.path() / class_name(label) / fmt::format("img_{:07d}.jpg", i);
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(s.jpeg.data()),
              static_cast<std::streamsize>(s.jpeg.size()));
      if (!f) fail_errno("write", file.string(), errno);
    });
  });
  throw_if_interrupted("synth");
  staging.commit();
  return o.count;
}

uint64_t synth_tokens(const fs::path& out, const SynthTokensOptions& o) {
  EVENFEED_CHECK(o.count > 0, "--count must be positive");
  EVENFEED_CHECK(o.classes >= 1 && static_cast<uint32_t>(o.classes) * 8 < o.vocab_size,
                 "--classes {} needs a vocabulary of more than {} ids", o.classes, o.classes * 8);
  std::error_code ec;
  EVENFEED_CHECK(o.force || !fs::exists(out, ec), "{} already exists; pass --force to replace it",
                 out.string());
  const fs::path temp =
      out.parent_path() / fmt::format(".{}.evenfeed-tmp-{}", out.filename().string(), ::getpid());
  {
    std::ofstream f(temp);
    EVENFEED_CHECK(f.good(), "cannot write {}: check that its folder exists and is writable",
                   temp.string());
    // Class c owns ids [8c, 8c+8): each document draws 15% of its tokens there, the
    // rest uniformly from the shared range, so mean-pooled embeddings separate classes.
    const uint32_t shared_begin = static_cast<uint32_t>(o.classes) * 8;
    for (uint64_t i = 0; i < o.count; ++i) {
      CounterRng rng(o.seed, RngStream::kSynth, 1, i);
      const int label = static_cast<int>(rng.below(static_cast<uint64_t>(o.classes)));
      double length = o.median_length * std::exp(0.9 * rng.normal());
      if (rng.uniform() < 0.01) length = o.median_length * rng.uniform(20, 100);
      const uint64_t n = std::clamp<uint64_t>(static_cast<uint64_t>(length), 1, o.max_length);
      std::string line = "{\"tokens\":[";
      for (uint64_t k = 0; k < n; ++k) {
        uint32_t t =
            rng.uniform() < 0.15
                ? static_cast<uint32_t>(8 * label + rng.below(8))
                : shared_begin + static_cast<uint32_t>(rng.below(o.vocab_size - shared_begin));
        if (k > 0) line += ',';
        line += std::to_string(t);
      }
      line += fmt::format("],\"label\":{}}}\n", label);
      f << line;
      if ((i & 1023) == 0) throw_if_interrupted("synth");
    }
    f.flush();
    if (!f) {
      fs::remove(temp, ec);
      fail_errno("write", temp.string(), errno);
    }
  }
  fs::rename(temp, out);
  return o.count;
}

}  // namespace evenfeed
