// convert_images: ImageFolder trees and list files into an image dataset.
#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "core/error.h"
#include "core/mapped_file.h"
#include "loader/convert.h"
#include "loader/convert_pipeline.h"
#include "loader/image_sources.h"
#include "loader/jpeg_default_tables.h"
#include "loader/jpeg_encode.h"
#include "loader/jpeg_probe.h"
#include "loader/jpeg_restart.h"
#include "loader/record.h"

namespace evenfeed {
namespace {

// Per-thread state: TurboJPEG handles are not thread-safe, and buffers are reused.
struct ImageScratch {
  TjHandle decompressor{TjHandle::Mode::kDecompress};
  std::unique_ptr<TjHandle> compressor;        // only with --reencode
  std::unique_ptr<JpegTranscoder> transcoder;  // baseline rewrites and restart markers
  std::vector<std::byte> transcoded;
  std::vector<std::byte> with_tables;
  std::vector<std::byte> file;
  std::vector<std::byte> reencoded;
  std::vector<unsigned char> pixels;
  RgbImage rgb;
};

// The JPEG bytes to store for a file: the file itself, or with --reencode a JPEG made
// from a PNG, BMP or PPM. Returns the problem, or nothing with `jpeg` set.
std::optional<std::string> jpeg_bytes_of(const ImageInput& input, const ConvertOptions& options,
                                         ImageScratch& s, std::span<const std::byte>& jpeg) {
  if (auto problem = read_whole_file(input.path, s.file)) return problem;
  if (s.file.empty()) return std::string("empty file");
  const std::string format = sniff_image_format(s.file);
  jpeg = s.file;
  if (format == "JPEG") return std::nullopt;
  if (format.empty()) return std::string("not a JPEG (unknown file type)");
  if (!can_reencode(format)) {
    return fmt::format(
        "not a JPEG but {}, which evenfeed cannot read; convert it to JPEG or PNG "
        "first",
        format);
  }
  if (!options.reencode)
    return fmt::format("not a JPEG but {}; pass --reencode to store it as JPEG", format);
  if (auto problem = read_rgb_image(input.path, s.file, format, s.rgb)) return problem;
  if (!s.compressor) s.compressor = std::make_unique<TjHandle>(TjHandle::Mode::kCompress);
  JpegEncodeOptions encode;
  encode.quality = options.quality;
  encode_jpeg(*s.compressor, s.rgb.rgb.data(), s.rgb.width, s.rgb.height, TJPF_RGB, encode,
              s.reencoded);
  jpeg = s.reencoded;
  return std::nullopt;
}

// Makes each input's record, on any thread: its JPEG bytes, checked and, as the options
// ask, rewritten; counts the rewrites for the report.
class ImagePreparer {
 public:
  ImagePreparer(const ImageSources& sources, const ConvertOptions& options)
      : sources_(sources), options_(options) {}

  std::optional<std::string> operator()(uint64_t i, PreparedSample& sample) {
    ImageScratch& s = scratch_.local();
    const ImageInput& input = sources_.inputs[i];
    std::span<const std::byte> jpeg;
    if (auto problem = jpeg_bytes_of(input, options_, s, jpeg)) return problem;
    // A Motion-JPEG frame gets the standard Huffman tables it leaves out written in,
    // so it is stored as a JPEG that every decoder reads alike.
    if (add_default_huffman_tables(jpeg, s.with_tables)) {
      jpeg = s.with_tables;
      ++tables_added;
    }
    JpegInfo info;
    if (auto problem = probe_jpeg(s.decompressor, jpeg, false, info, s.pixels)) return problem;
    if (auto problem = check_or_rewrite(s, info, jpeg)) return problem;
    const uint64_t length = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
    encode_record(RecordKind::kJpeg, input.label, length, jpeg, sample.record);
    sample.entry = {length, input.label, static_cast<uint32_t>(info.width),
                    static_cast<uint32_t>(info.height)};
    return std::nullopt;
  }

  std::atomic<uint64_t> rewritten{0}, restarted{0}, tables_added{0};

 private:
  // Rewritten losslessly: with restart markers (unless a progressive file is kept as it
  // is), or as baseline for a progressive file. The rewrite entropy-decodes every
  // coefficient and treats libjpeg's warnings as damage, so it checks what the decode
  // check would; other files get the decode check itself.
  std::optional<std::string> check_or_rewrite(ImageScratch& s, JpegInfo& info,
                                              std::span<const std::byte>& jpeg) {
    const bool kept_progressive = info.progressive && !options_.baseline;
    const bool rewrite = !kept_progressive && (options_.restart_markers || info.progressive);
    if (!rewrite) {
      if (!options_.check_decode) return std::nullopt;
      return probe_jpeg(s.decompressor, jpeg, true, info, s.pixels);
    }
    if (!s.transcoder) s.transcoder = std::make_unique<JpegTranscoder>();
    // With --no-check-decode (which asks to let damaged data in) a file whose rewrite
    // finds damage is stored as it is, for the loader's bad-record policy to meet.
    if (auto problem = s.transcoder->rewrite(jpeg, options_.restart_markers, s.transcoded)) {
      if (options_.check_decode) return problem;
      return std::nullopt;
    }
    jpeg = s.transcoded;
    if (options_.restart_markers) ++restarted;
    if (info.progressive) ++rewritten;
    return std::nullopt;
  }

  const ImageSources& sources_;
  const ConvertOptions& options_;
  tbb::enumerable_thread_specific<ImageScratch> scratch_;
};

DatasetWriterOptions writer_options_for(const ImageSources& sources,
                                        const std::filesystem::path& src,
                                        const ConvertOptions& options) {
  DatasetWriterOptions w;
  w.kind = DatasetKind::kImage;
  w.classes = sources.classes;
  w.source_path = std::filesystem::absolute(src).string();
  w.source_format = sources.format;
  w.samples_per_shard =
      samples_per_shard(sources.inputs.size(), sources.total_bytes, options.shards);
  w.replace_existing = options.force;
  return w;
}

}  // namespace

ConvertReport convert_images(const std::filesystem::path& src, const std::filesystem::path& out,
                             const ConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  EVENFEED_CHECK(options.quality >= 1 && options.quality <= 100, "--quality must be 1-100, got {}",
                 options.quality);
  ImageSources sources = find_image_sources(src);
  ConvertReport report;
  report.out = out;
  report.kind = "image";
  report.source_format = sources.format;
  report.warnings = sources.warnings;
  DatasetWriter writer(out, writer_options_for(sources, src, options));
  ImagePreparer prepare(sources, options);
  auto source_name = [&](uint64_t i) { return sources.inputs[i].source; };
  run_conversion(
      sources.inputs.size(), [&](uint64_t i, PreparedSample& sample) { return prepare(i, sample); },
      source_name, writer, options, report);
  commit_conversion(writer, src, "inputs", start, report);
  report.rewritten_as_baseline = prepare.rewritten;
  report.with_restart_markers = prepare.restarted;
  report.with_default_huffman_tables = prepare.tables_added;
  return report;
}

}  // namespace evenfeed
