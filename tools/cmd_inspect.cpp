// evenfeed inspect DIR [--sample ID] [--json]
#include <cstdio>

#include "loader/dataset.h"
#include "loader/dataset_summary.h"
#include "tools/commands.h"

namespace evenfeed::cli {

void add_inspect(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "inspect", "Summarise a dataset: kind, sizes, label and length distributions");
  static std::string dir;
  static int64_t sample = -1;
  static bool json = false;
  cmd->add_option("DIR", dir, "Dataset directory")->required();
  cmd->add_option("--sample", sample,
                  "Show one sample in detail: source, label, size, record, checksum")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", json, "Print one JSON object");
  cmd->callback([&run] {
    run = [] {
      Dataset dataset(dir);
      if (sample >= 0) {
        nlohmann::json j = describe_sample(dataset, static_cast<uint64_t>(sample));
        std::printf("%s\n", j.dump(json ? -1 : 2).c_str());
        return j["ok"].get<bool>() ? 0 : 1;
      }
      DatasetSummary summary = summarize(dataset);
      if (json) {
        std::printf("%s\n", summary.to_json().dump().c_str());
      } else {
        std::printf("%s", summary.to_text().c_str());
      }
      return 0;
    };
  });
}

}  // namespace evenfeed::cli
