// evenfeed verify DIR [--decode] [--json]: exit 0 only when every check passes.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "loader/verify.h"
#include "tools/commands.h"

namespace evenfeed::cli {

void add_verify(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "verify", "Check every file, record and checksum of a dataset; name each bad sample");
  static std::string dir;
  static bool decode = false, json = false;
  static int threads = 0;
  cmd->add_option("DIR", dir, "Dataset directory")->required();
  cmd->add_flag("--decode", decode, "Also decode every JPEG and check its size against the index");
  cmd->add_option("--threads", threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--json", json, "Print one JSON object");
  cmd->callback([&run] {
    run = [] {
      VerifyReport r = verify_dataset(dir, {decode, threads});
      if (json) {
        nlohmann::json j = {
            {"ok", r.ok()}, {"num_samples", r.num_samples}, {"file_problems", r.file_problems}};
        j["bad_samples"] = nlohmann::json::array();
        for (const auto& b : r.bad_samples) {
          j["bad_samples"].push_back(
              {{"id", b.id}, {"shard", b.shard}, {"source", b.source}, {"problem", b.problem}});
        }
        std::printf("%s\n", j.dump().c_str());
        return r.ok() ? 0 : 1;
      }
      for (const auto& p : r.file_problems) std::printf("bad file: %s\n", p.c_str());
      const size_t shown = 50;
      for (size_t i = 0; i < r.bad_samples.size() && i < shown; ++i) {
        const auto& b = r.bad_samples[i];
        std::printf("bad sample %llu (%s, source %s): %s\n", static_cast<unsigned long long>(b.id),
                    b.shard.c_str(), b.source.c_str(), b.problem.c_str());
      }
      if (r.bad_samples.size() > shown) {
        std::printf("... and %zu more bad samples (--json lists all)\n",
                    r.bad_samples.size() - shown);
      }
      std::printf("%s: %llu samples checked%s, %zu bad, %zu damaged file(s)\n",
                  r.ok() ? "OK" : "FAILED", static_cast<unsigned long long>(r.samples_checked),
                  decode ? " (with decode)" : "", r.bad_samples.size(), r.file_problems.size());
      return r.ok() ? 0 : 1;
    };
  });
}

}  // namespace evenfeed::cli
