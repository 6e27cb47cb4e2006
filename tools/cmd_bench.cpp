// evenfeed bench loader DIR: images/s (or samples/s), MB/s, peak memory and per-stage
// times of the loader, beside a plain full-size TurboJPEG decode loop in the same run.
#include <png.h>
#include <sys/resource.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "loader/dataset.h"
#include "loader/loader.h"
#include "loader/turbojpeg_handle.h"
#include "sampler/distributed_sampler.h"
#include "tools/commands.h"

namespace evenfeed::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchFlags {
  std::string dir, mode = "train", output = "uint8", dump;
  uint64_t batch_size = 64, seed = 0;
  int threads = 0, prefetch = 4, epochs = 2, size = 224;
  bool json = false, no_decode_anchor = false;
};

// Resident memory now, by kind (anonymous: our allocations; file: mapped files such
// as the dataset's shards and the libraries), from /proc/self/status.
double status_mb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  }
  return 0;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// The plain full-size decode every loader is measured against: TurboJPEG, RGB, all cores.
double full_decode_images_per_sec(const Dataset& dataset, int threads) {
  struct State {
    explicit State(const Dataset& d) : session(d) {}
    Dataset::ReadSession session;
    TjHandle handle{TjHandle::Mode::kDecompress};
    std::vector<unsigned char> pixels;
  };
  tbb::enumerable_thread_specific<State> states([&] { return State(dataset); });
  tbb::task_arena arena(threads > 0 ? threads : tbb::info::default_concurrency());
  const auto start = Clock::now();
  arena.execute([&] {
    tbb::parallel_for(uint64_t{0}, dataset.size(), [&](uint64_t id) {
      State& s = states.local();
      RecordView v = dataset.read(s.session, id);
      const IndexEntry e = dataset.index().entry(id);
      s.pixels.resize(static_cast<size_t>(e.width) * e.height * 3);
      tjDecompress2(s.handle.get(), reinterpret_cast<const unsigned char*>(v.payload.data()),
                    v.payload.size(), s.pixels.data(), static_cast<int>(e.width), 0,
                    static_cast<int>(e.height), TJPF_RGB, 0);
    });
  });
  return static_cast<double>(dataset.size()) /
         std::chrono::duration<double>(Clock::now() - start).count();
}

void write_png(const std::filesystem::path& path, const uint8_t* rgb, int size) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = image.height = static_cast<png_uint_32>(size);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgb, 0, nullptr)) {
    fail("cannot write {}: {}", path.string(), image.message);
  }
}

void dump_batch(const Dataset& dataset, const Batch& batch, const BenchFlags& f) {
  EVENFEED_CHECK(f.output == "uint8", "--dump-batch needs --output uint8");
  std::filesystem::create_directories(f.dump);
  nlohmann::json list = nlohmann::json::array();
  const size_t bytes = static_cast<size_t>(f.size) * f.size * 3;
  for (size_t i = 0; i < batch.size(); ++i) {
    const std::string file = fmt::format("{:04d}.png", i);
    write_png(std::filesystem::path(f.dump) / file, batch.images_uint8() + i * bytes, f.size);
    const CropBox& c = batch.crops()[i];
    list.push_back({{"sample", batch.sample_ids()[i]},
                    {"source", std::string(dataset.index().source_name(batch.sample_ids()[i]))},
                    {"file", file},
                    {"crop", {c.x, c.y, c.width, c.height}},
                    {"flip", c.flip}});
  }
  std::ofstream(std::filesystem::path(f.dump) / "batch.json") << list.dump(1) << "\n";
}

// Adds one epoch's loader stats to `sum` (mean_ready_batches is summed too, for a mean).
void add_to(LoaderStats& sum, const LoaderStats& epoch) {
  sum.batches += epoch.batches;
  sum.samples += epoch.samples;
  sum.substituted += epoch.substituted;
  sum.bytes_read += epoch.bytes_read;
  sum.read_seconds += epoch.read_seconds;
  sum.decode_seconds += epoch.decode_seconds;
  sum.resize_seconds += epoch.resize_seconds;
  sum.collate_seconds += epoch.collate_seconds;
  sum.consumer_wait_seconds += epoch.consumer_wait_seconds;
  sum.mean_ready_batches += epoch.mean_ready_batches;
}

LoaderOptions loader_options_of(const BenchFlags& f) {
  LoaderOptions o;
  o.threads = f.threads;
  o.prefetch = f.prefetch;
  o.seed = f.seed;
  o.mode = f.mode == "train" ? AugmentMode::kTrain : AugmentMode::kEval;
  o.image.size = f.size;
  o.image.layout = f.output == "uint8" ? ImageLayout::kUint8NHWC : ImageLayout::kFloat32NCHW;
  return o;
}

// What the timed epochs served, how long they took and the loader's stats summed over
// them (its mean ready batches averaged).
struct TimedEpochs {
  uint64_t samples = 0;
  double seconds = 0;
  LoaderStats stats;
};

// Loads every epoch through the loader on one rank; epoch 0 warms up, as in the
// anchor, and is timed only when it is the only one.
TimedEpochs load_epochs(const Dataset& dataset, const BenchFlags& f) {
  const LoaderOptions o = loader_options_of(f);
  SamplerOptions sampler;
  sampler.batch_size = f.batch_size;
  sampler.drop_last = true;  // as the PyTorch anchor does
  TimedEpochs timed;
  int timed_epochs = 0;
  for (int epoch = 0; epoch < f.epochs; ++epoch) {
    DistributedSampler plan(dataset.size(), 1, sampler, {f.seed, static_cast<uint32_t>(epoch), {}});
    Loader loader(dataset, o, static_cast<uint32_t>(epoch), batches_of_rank(plan, 0));
    const auto start = Clock::now();
    uint64_t samples = 0;
    while (auto batch = loader.next()) {
      if (epoch == 0 && batch->index() == 0 && !f.dump.empty()) dump_batch(dataset, *batch, f);
      samples += batch->size();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (epoch > 0 || f.epochs == 1) {
      timed.samples += samples;
      timed.seconds += seconds;
      add_to(timed.stats, loader.stats());
      ++timed_epochs;
    }
  }
  timed.stats.mean_ready_batches /= std::max(1, timed_epochs);
  return timed;
}

nlohmann::json bench_json(const Dataset& dataset, const BenchFlags& f, const TimedEpochs& timed) {
  const LoaderStats& s = timed.stats;
  const bool images = dataset.manifest().kind == DatasetKind::kImage;
  nlohmann::json j = {
      {"bench", "loader"},
      {"kind", dataset_kind_name(dataset.manifest().kind)},
      {"samples", timed.samples},
      {"seconds", timed.seconds},
      {images ? "images_per_sec" : "samples_per_sec", timed.samples / timed.seconds},
      {"mb_per_sec", s.bytes_read / 1048576.0 / timed.seconds},
      {"peak_rss_mb", peak_rss_mb()},
      {"rss_anon_mb_at_end", status_mb("RssAnon")},
      {"rss_file_mb_at_end", status_mb("RssFile")},
      {"batch_size", f.batch_size},
      {"threads", f.threads > 0 ? f.threads : tbb::info::default_concurrency()},
      {"prefetch", f.prefetch},
      {"mode", f.mode},
      {"output", f.output},
      {"size", f.size},
      {"stage_seconds",
       {{"read", s.read_seconds},
        {"decode", s.decode_seconds},
        {"resize", s.resize_seconds},
        {"collate", s.collate_seconds}}},
      {"consumer_wait_seconds", s.consumer_wait_seconds},
      {"mean_ready_batches", s.mean_ready_batches},
      {"substituted", s.substituted}};
  if (images && !f.no_decode_anchor)
    j["turbojpeg_full_decode_images_per_sec"] = full_decode_images_per_sec(dataset, f.threads);
  return j;
}

void print_bench_text(const nlohmann::json& j, const TimedEpochs& timed, bool images) {
  const LoaderStats& s = timed.stats;
  std::printf(
      "%.1f %s/s, %.1f MB/s, peak RSS %.1f MB; stages (thread-seconds over the timed "
      "epochs): read %.2f decode %.2f resize %.2f collate %.2f; consumer waited %.2f s\n",
      timed.samples / timed.seconds, images ? "images" : "samples", j["mb_per_sec"].get<double>(),
      j["peak_rss_mb"].get<double>(), s.read_seconds, s.decode_seconds, s.resize_seconds,
      s.collate_seconds, s.consumer_wait_seconds);
  if (j.contains("turbojpeg_full_decode_images_per_sec")) {
    std::printf("plain full-size TurboJPEG decode loop: %.1f images/s\n",
                j["turbojpeg_full_decode_images_per_sec"].get<double>());
  }
}

int run_bench(const BenchFlags& f) {
  Dataset dataset(f.dir);
  const TimedEpochs timed = load_epochs(dataset, f);
  const nlohmann::json j = bench_json(dataset, f, timed);
  if (f.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    print_bench_text(j, timed, dataset.manifest().kind == DatasetKind::kImage);
  }
  return 0;
}

}  // namespace

void add_bench(CLI::App& app, Runner& run) {
  auto* bench =
      app.add_subcommand("bench", "Measure the loader, all-reduce and host-to-device copies");
  bench->require_subcommand(1);
  static BenchFlags f;
  auto* loader = bench->add_subcommand(
      "loader", "Load every batch of DIR for some epochs and report throughput");
  loader->add_option("DIR", f.dir, "Dataset directory")->required();
  loader->add_option("--batch-size", f.batch_size, "Samples per batch")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  loader->add_option("--threads", f.threads, "Loader threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  loader->add_option("--prefetch", f.prefetch, "Batches in flight")->check(CLI::Range(1, 1024));
  loader->add_option("--epochs", f.epochs, "Epochs; the first warms up and the rest are timed")
      ->check(CLI::Range(1, 1000));
  loader->add_option("--mode", f.mode, "train (random resized crop + flip) or eval (centre crop)")
      ->check(CLI::IsMember({"train", "eval"}));
  loader->add_option("--size", f.size, "Output image side")->check(CLI::Range(8, 4096));
  loader->add_option("--output", f.output, "uint8 NHWC or float (normalised NCHW)")
      ->check(CLI::IsMember({"uint8", "float"}));
  loader->add_option("--seed", f.seed, "Seed")->check(kNotNegative);
  loader->add_option("--dump-batch", f.dump,
                     "Write the first batch as PNGs plus batch.json into this folder");
  loader->add_flag("--no-decode-anchor", f.no_decode_anchor,
                   "Skip the plain full-size decode loop");
  loader->add_flag("--json", f.json, "Print one JSON object");
  loader->callback([&run] { run = [] { return run_bench(f); }; });
  add_bench_comm(bench, run);
}

}  // namespace evenfeed::cli
