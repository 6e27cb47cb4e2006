// Faults end to end, as a user meets them (issue 7): training killed mid-epoch and
// resumed from its last checkpoint sees every sample exactly once per epoch (the same
// batches as a run never killed); a dataset damaged after conversion (a flipped bit in
// one shard, another shard truncated) is named by `verify`, and training with the
// substitute policy completes with the same steps on every rank.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {

using testing::evenfeed_bin;
using testing::run_command;
namespace fs = std::filesystem;

constexpr int kSamples = 100;

// step -> (epoch, ids) from one rank's samples log; a step logged twice (redone after
// a resume) keeps its last line, the one the final weights saw. Also counts lines.
struct RankLog {
  std::map<uint64_t, std::pair<uint32_t, std::vector<uint64_t>>> steps;
  std::map<uint64_t, int> times_logged;
};

RankLog read_samples_log(const fs::path& file) {
  RankLog log;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;  // a line cut by the kill
    const uint64_t step = j["step"];
    log.steps[step] = {j["epoch"].get<uint32_t>(), j["ids"].get<std::vector<uint64_t>>()};
    ++log.times_logged[step];
  }
  return log;
}

class TrainFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        run_command(evenfeed_bin() + " -q synth images " + (tmp_ / "src").string() + " --count " +
                    std::to_string(kSamples) + " --classes 4 --min-size 48 --max-size 96")
            .exit_code,
        0);
    ASSERT_EQ(run_command(evenfeed_bin() + " -q convert images " + (tmp_ / "src").string() + " " +
                          (tmp_ / "data").string() + " --shards 4 --no-restart-markers")
                  .exit_code,
              0);
  }
  testing::CommandResult train(const std::string& env, const std::string& flags,
                               const std::string& data = "data") {
    return run_command(env + " " + std::string(EVENFEED_MPIRUN) + " -np 2 " + evenfeed_bin() +
                       " -q train --data " + (tmp_ / data).string() +
                       " --image-size 8 --hidden 16 --loader-threads 1 --batch-size 8 " + flags);
  }
  testing::TempDir tmp_;
};

TEST_F(TrainFaults, KilledAndResumedTrainingSeesEverySampleOncePerEpoch) {
  const std::string common = " --epochs 2 --checkpoint-every 4 ";
  auto clean = train("", common + "--checkpoint-dir " + (tmp_ / "a").string() + " --log-samples " +
                             (tmp_ / "a_samples").string());
  ASSERT_EQ(clean.exit_code, 0) << clean.err;

  // Rank 1 dies (SIGKILL) after step 9; the last checkpoint is step 8's, mid epoch 1.
  const std::string resumed_flags = common + "--checkpoint-dir " + (tmp_ / "b").string() +
                                    " --log-samples " + (tmp_ / "b_samples").string();
  auto killed = train("EVENFEED_FAULT_KILL_AFTER_STEP=1:9", resumed_flags);
  EXPECT_NE(killed.exit_code, 0);
  auto resumed = train("", resumed_flags + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;

  for (int rank = 0; rank < 2; ++rank) {
    const std::string name = "_samples.rank" + std::to_string(rank) + ".jsonl";
    const RankLog a = read_samples_log(tmp_ / ("a" + name));
    const RankLog b = read_samples_log(tmp_ / ("b" + name));
    // The resumed run redid step 9 from the checkpoint of step 8 (rank 1 had logged
    // it before dying) and none before it.
    EXPECT_EQ(b.times_logged.at(8), 1) << "rank " << rank;
    if (rank == 1) {
      EXPECT_EQ(b.times_logged.at(9), 2);
    }
    // Same steps, same samples, as the run that was never killed.
    EXPECT_EQ(a.steps, b.steps) << "rank " << rank;
  }
  // Every sample exactly once per epoch, over both ranks and both runs.
  std::map<uint32_t, std::multiset<uint64_t>> seen;
  for (int rank = 0; rank < 2; ++rank) {
    const RankLog b = read_samples_log(tmp_ / ("b_samples.rank" + std::to_string(rank) + ".jsonl"));
    for (const auto& [step, entry] : b.steps)
      seen[entry.first].insert(entry.second.begin(), entry.second.end());
  }
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& [epoch, ids] : seen) {
    EXPECT_EQ(ids.size(), static_cast<size_t>(kSamples)) << "epoch " << epoch;
    for (uint64_t id = 0; id < kSamples; ++id)
      EXPECT_EQ(ids.count(id), 1u) << "epoch " << epoch << " sample " << id;
  }
}

// Flips one bit inside the payload of a record of `shard` (found by its source bytes).
uint64_t flip_a_payload_bit(const fs::path& data, const fs::path& src, const std::string& shard) {
  auto bytes = testing::read_file(data / shard);
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto jpeg = testing::read_file(entry.path());
    auto at = std::search(bytes.begin(), bytes.end(), jpeg.begin() + 200, jpeg.begin() + 240);
    if (at == bytes.end()) continue;
    *(at + 5) ^= std::byte{0x10};
    testing::write_file(data / shard, bytes);
    return 1;
  }
  return 0;
}

TEST_F(TrainFaults, DamagedShardsAreNamedAndSubstitutedWithEqualStepsOnEveryRank) {
  fs::copy(tmp_ / "data", tmp_ / "clean", fs::copy_options::recursive);
  ASSERT_EQ(flip_a_payload_bit(tmp_ / "data", tmp_ / "src", "shard-00001.lmdb"), 1u);
  const auto shard3 = tmp_ / "data" / "shard-00003.lmdb";
  fs::resize_file(shard3, fs::file_size(shard3) / 2);

  auto verify = run_command(evenfeed_bin() + " verify " + (tmp_ / "data").string());
  EXPECT_NE(verify.exit_code, 0);
  const std::string report = verify.out + verify.err;
  EXPECT_NE(report.find("checksum"), std::string::npos) << report;
  EXPECT_NE(report.find("shard-00003.lmdb"), std::string::npos) << report;

  // Without a policy the job stops, naming a damaged sample.
  auto strict = train("", "--epochs 1 --verify-checksums");
  EXPECT_NE(strict.exit_code, 0);
  EXPECT_NE(strict.err.find("sample"), std::string::npos) << strict.err;

  const std::string flags = " --epochs 1 --verify-checksums --on-bad-record substitute";
  auto clean = train("", flags + " --log-samples " + (tmp_ / "c").string(), "clean");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  auto damaged = train("", flags + " --log-samples " + (tmp_ / "d").string());
  ASSERT_EQ(damaged.exit_code, 0) << damaged.err;
  size_t steps = 0;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string name = ".rank" + std::to_string(rank) + ".jsonl";
    const RankLog c = read_samples_log(tmp_ / ("c" + name));
    const RankLog d = read_samples_log(tmp_ / ("d" + name));
    ASSERT_EQ(c.steps.size(), d.steps.size()) << "rank " << rank;
    steps = d.steps.size();
    for (const auto& [step, entry] : c.steps)  // same samples per step, some replaced
      EXPECT_EQ(entry.second.size(), d.steps.at(step).second.size()) << "step " << step;
  }
  EXPECT_GT(steps, 0u);
  EXPECT_NE(damaged.err.find("replaced by sample"), std::string::npos) << damaged.err;
}

}  // namespace
}  // namespace evenfeed
