// evenfeed convert images|tokens SRC OUT
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/log.h"
#include "loader/convert.h"
#include "tools/commands.h"
#include "tools/progress.h"

namespace evenfeed::cli {
namespace {

struct ConvertFlags {
  std::string src, out, on_error = "fail";
  bool json = false, no_check_decode = false, keep_progressive = false, no_restart_markers = false;
  int64_t eot = -1, vocab_size = -1;
  ConvertOptions options;
};

void add_common(CLI::App* cmd, ConvertFlags& f) {
  cmd->add_option("SRC", f.src, "Input")->required();
  cmd->add_option("OUT", f.out, "Output dataset directory (must not exist unless --force)")
      ->required();
  cmd->add_option("--shards", f.options.shards,
                  "Number of shards (default: one per ~256 MiB of input)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", f.options.threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--on-error", f.on_error,
                  "fail: stop at the first bad input; skip: leave it out and list it")
      ->check(CLI::IsMember({"fail", "skip"}));
  cmd->add_flag("--force", f.options.force, "Replace OUT if it exists");
  cmd->add_flag("--json", f.json, "Print the summary as one JSON object");
}

int print_report(const ConvertReport& r, bool json) {
  if (json) {
    nlohmann::json j = {{"out", r.out.string()},
                        {"kind", r.kind},
                        {"source_format", r.source_format},
                        {"inputs", r.inputs},
                        {"samples", r.samples},
                        {"payload_bytes", r.payload_bytes},
                        {"shards", r.shards},
                        {"seconds", r.seconds},
                        {"rewritten_as_baseline", r.rewritten_as_baseline},
                        {"with_restart_markers", r.with_restart_markers},
                        {"with_default_huffman_tables", r.with_default_huffman_tables}};
    j["skipped"] = nlohmann::json::array();
    for (const auto& s : r.skipped)
      j["skipped"].push_back({{"source", s.source}, {"reason", s.reason}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  for (const auto& s : r.skipped)
    std::printf("skipped %s: %s\n", s.source.c_str(), s.reason.c_str());
  std::printf(
      "converted %s (%s) -> %s: %llu samples in %zu shard(s), %.1f MiB payload, %zu skipped, %.1f "
      "s\n",
      r.source_format.c_str(), r.kind.c_str(), r.out.string().c_str(),
      static_cast<unsigned long long>(r.samples), r.shards, r.payload_bytes / 1048576.0,
      r.skipped.size(), r.seconds);
  if (r.with_default_huffman_tables > 0)
    std::printf("%llu Motion-JPEG frame(s) stored with the standard Huffman tables written in\n",
                static_cast<unsigned long long>(r.with_default_huffman_tables));
  return 0;
}

void finish_flags(ConvertFlags& f, Progress& progress) {
  f.options.on_error = f.on_error == "skip" ? OnError::kSkip : OnError::kFail;
  f.options.check_decode = !f.no_check_decode;
  f.options.baseline = !f.keep_progressive;
  f.options.restart_markers = !f.no_restart_markers;
  if (f.eot >= 0) f.options.eot = static_cast<uint32_t>(f.eot);
  if (f.vocab_size > 0) f.options.vocab_size = static_cast<uint64_t>(f.vocab_size);
  f.options.progress = [&progress](uint64_t done, uint64_t total) { progress.update(done, total); };
}

}  // namespace

void add_convert(CLI::App& app, Runner& run) {
  auto* convert =
      app.add_subcommand("convert", "Convert images or token files into a sharded LMDB dataset");
  convert->require_subcommand(1);
  static ConvertFlags images_flags, tokens_flags;

  auto* images = convert->add_subcommand(
      "images",
      "SRC is an ImageFolder tree (one subfolder per class) or a list file of `path label` lines");
  add_common(images, images_flags);
  images->add_flag("--reencode", images_flags.options.reencode,
                   "Accept PNG, BMP and PPM by encoding them as JPEG");
  images->add_option("--quality", images_flags.options.quality, "JPEG quality for --reencode")
      ->check(CLI::Range(1, 100));
  images->add_flag("--keep-progressive", images_flags.keep_progressive,
                   "Store progressive JPEGs as they are instead of rewriting them as baseline "
                   "(same pixels; baseline decodes faster)");
  images->add_flag("--no-restart-markers", images_flags.no_restart_markers,
                   "Store baseline JPEGs as they are instead of adding a restart marker after "
                   "every MCU (same pixels; with them the loader decodes only a crop's MCUs)");
  images->add_flag(
      "--no-check-decode", images_flags.no_check_decode,
      "Only parse headers instead of entropy-decoding every JPEG (faster, misses damaged data)");
  images->callback([&run] {
    run = interruptible([] {
      Progress progress("convert");
      finish_flags(images_flags, progress);
      ConvertReport report =
          convert_images(images_flags.src, images_flags.out, images_flags.options);
      progress.finish();
      for (const auto& w : report.warnings) log_warn("{}", w);
      return print_report(report, images_flags.json);
    });
  });

  auto* tokens = convert->add_subcommand("tokens",
                                         "SRC is JSON lines ({\"tokens\":[...],\"label\":n}), a "
                                         "Megatron-LM .bin/.idx pair or llm.c .bin shards "
                                         "(a file or a folder of them)");
  add_common(tokens, tokens_flags);
  tokens->add_option("--format", tokens_flags.options.token_format, "Input format")
      ->check(CLI::IsMember({"auto", "jsonl", "megatron", "llmc"}));
  tokens
      ->add_option("--eot", tokens_flags.eot,
                   "llm.c: end-of-text id that separates documents (GPT-2: 50256)")
      ->check(CLI::Range(int64_t{0}, int64_t{UINT32_MAX}));
  tokens
      ->add_option("--vocab-size", tokens_flags.vocab_size,
                   "Vocabulary size (default: largest id + 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{UINT32_MAX} + 1));
  tokens->callback([&run] {
    run = interruptible([] {
      Progress progress("convert");
      finish_flags(tokens_flags, progress);
      ConvertReport report =
          convert_tokens(tokens_flags.src, tokens_flags.out, tokens_flags.options);
      progress.finish();
      return print_report(report, tokens_flags.json);
    });
  });
}

}  // namespace evenfeed::cli
