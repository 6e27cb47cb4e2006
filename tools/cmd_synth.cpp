// evenfeed synth images|tokens OUT: deterministic synthetic inputs for demos and tests.
#include <cstdio>

#include "loader/synth.h"
#include "tools/commands.h"

namespace evenfeed::cli {

void add_synth(CLI::App& app, Runner& run) {
  auto* synth = app.add_subcommand(
      "synth", "Write synthetic inputs (an ImageFolder tree, or JSON-lines tokens)");
  synth->require_subcommand(1);
  static std::string images_out, tokens_out;
  static SynthImagesOptions io;
  static SynthTokensOptions to;

  auto* images = synth->add_subcommand(
      "images", "ImageFolder tree of JPEGs whose class decides hue and shape");
  images->add_option("OUT", images_out, "Output folder")->required();
  images->add_option("--count", io.count, "Number of images")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  images->add_option("--classes", io.classes, "Number of classes")->check(CLI::Range(1, 1000));
  images->add_option("--seed", io.seed, "Seed")->check(kNotNegative);
  images->add_option("--min-size", io.min_size, "Smallest shorter side, pixels")
      ->check(CLI::Range(8, 8192));
  images->add_option("--max-size", io.max_size, "Largest shorter side, pixels")
      ->check(CLI::Range(8, 8192));
  images->add_option("--threads", io.threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  images->add_flag("--force", io.force, "Replace OUT if it exists");
  images->callback([&run] {
    run = interruptible([] {
      uint64_t n = synth_images(images_out, io);
      std::printf("wrote %llu images in %d classes to %s\n", static_cast<unsigned long long>(n),
                  io.classes, images_out.c_str());
      return 0;
    });
  });

  auto* tokens =
      synth->add_subcommand("tokens", "JSON lines with long-tailed lengths and a learnable label");
  tokens->add_option("OUT", tokens_out, "Output .jsonl file")->required();
  tokens->add_option("--count", to.count, "Number of documents")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  tokens->add_option("--classes", to.classes, "Number of labels")->check(CLI::Range(1, 1000));
  tokens->add_option("--vocab-size", to.vocab_size, "Vocabulary size")
      ->check(CLI::Range(16, 1 << 24));
  tokens->add_option("--median-length", to.median_length, "Median document length")
      ->check(CLI::Range(1.0, 1e6));
  tokens->add_option("--max-length", to.max_length, "Longest document")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
  tokens->add_option("--seed", to.seed, "Seed")->check(kNotNegative);
  tokens->add_flag("--force", to.force, "Replace OUT if it exists");
  tokens->callback([&run] {
    run = interruptible([] {
      uint64_t n = synth_tokens(tokens_out, to);
      std::printf("wrote %llu documents to %s\n", static_cast<unsigned long long>(n),
                  tokens_out.c_str());
      return 0;
    });
  });
}

}  // namespace evenfeed::cli
