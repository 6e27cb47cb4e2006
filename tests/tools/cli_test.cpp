// The `evenfeed` binary as a user meets it: exit codes, one clear error line, JSON
// output, and that interrupts, kills and a full disk never leave a half-written
// dataset.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/support/fixtures.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {
namespace fs = std::filesystem;
using testing::run_command;

const std::string kBin = testing::evenfeed_bin();

size_t line_count(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

void expect_one_error_line(const testing::CommandResult& r, int code, const std::string& words) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("evenfeed: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  expect_one_error_line(run_command(kBin), 2, "subcommand");
  expect_one_error_line(run_command(kBin + " convert images a b --bogus"), 2, "--bogus");
  expect_one_error_line(run_command(kBin + " convert images a b --on-error maybe"), 2, "maybe");
  expect_one_error_line(run_command(kBin + " synth images x --count 0"), 2, "count");
  EXPECT_EQ(run_command(kBin + " --help").exit_code, 0);
  EXPECT_EQ(run_command(kBin + " convert images --help").exit_code, 0);
}

// CLI11 reads a negative number into an unsigned option as a huge one: each of these
// used to run, with seed 2^64 - 1, no sample cap, a stop that never came or, for --lr,
// the default rate. They are usage errors naming the flag, before anything is read.
TEST(Cli, NegativeCountsSeedsAndRatesAreUsageErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {" plan --lengths x --seed -1", "--seed"},
      {" plan --lengths x --max-batch-size -1", "--max-batch-size"},
      {" plan --lengths x --max-batch-tokens -1", "--max-batch-tokens"},
      {" plan --lengths x --resume-at-step -2", "--resume-at-step"},
      {" train --data x --seed -3", "--seed"},
      {" train --data x --max-batch-size -1", "--max-batch-size"},
      {" train --data x --stop-at-step -1", "--stop-at-step"},
      {" train --data x --checkpoint-every -1", "--checkpoint-every"},
      {" train --data x --lr -0.1", "--lr"},
      {" train --data x --lr 0", "--lr"},
      {" train --data x --momentum 1.5", "--momentum"},
      {" train --data x --weight-decay -1", "--weight-decay"},
      {" synth images x --seed -1", "--seed"},
      {" synth tokens x --seed -1", "--seed"},
      {" bench loader x --seed -1", "--seed"},
  };
  for (const auto& [args, flag] : cases) {
    SCOPED_TRACE(args);
    expect_one_error_line(run_command(kBin + args), 2, flag);
  }
}

TEST(Cli, BadInputsExitOneWithOneLineNamingThem) {
  testing::TempDir tmp;
  expect_one_error_line(
      run_command(kBin + " convert images " + (tmp / "nope").string() + " " + (tmp / "o").string()),
      1, "no such file");
  expect_one_error_line(run_command(kBin + " inspect " + tmp.path().string()), 1, "evenfeed.json");
  expect_one_error_line(run_command(kBin + " verify " + (tmp / "nope").string()), 1, "manifest");
  EXPECT_FALSE(fs::exists(tmp / "o"));
}

class CliDataset : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r =
        run_command(kBin + " -q synth images " + src() + " --count 24 --classes 3 --max-size 160");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_command(kBin + " -q convert images " + src() + " " + out() + " --shards 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("24 samples in 2 shard(s)"), std::string::npos) << r.out;
  }
  std::string src() const { return (tmp_ / "src").string(); }
  std::string out() const { return (tmp_ / "out").string(); }
  testing::TempDir tmp_;
};

TEST_F(CliDataset, InspectJsonHasTheDocumentedFields) {
  auto r = run_command(kBin + " inspect " + out() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "image");
  EXPECT_EQ(j["num_samples"], 24);
  EXPECT_EQ(j["num_shards"], 2);
  EXPECT_GT(j["total_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["labels"].size(), 3u);
  auto sample =
      nlohmann::json::parse(run_command(kBin + " inspect " + out() + " --sample 23 --json").out);
  EXPECT_EQ(sample["source"], "02_triangle/img_0000023.jpg");
  EXPECT_EQ(sample["class"], "02_triangle");
  expect_one_error_line(run_command(kBin + " inspect " + out() + " --sample 24"), 1,
                        "out of range");
}

TEST_F(CliDataset, VerifyExitCodeFollowsTheData) {
  auto clean = run_command(kBin + " verify " + out() + " --decode --json");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_TRUE(nlohmann::json::parse(clean.out)["ok"].get<bool>());
  fs::resize_file(fs::path(out()) / "shard-00001.lmdb", 5000);
  auto broken = run_command(kBin + " verify " + out());
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.out.find("bad sample 12 (shard-00001.lmdb, source "), std::string::npos)
      << broken.out;
  EXPECT_NE(broken.out.find("FAILED"), std::string::npos) << broken.out;
  auto j = nlohmann::json::parse(run_command(kBin + " verify " + out() + " --json").out);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_EQ(j["bad_samples"].size(), 12u);
}

// A command with nothing to clean up (here `bench loader` over 1,000 epochs) stops at
// once on SIGTERM, killed by it, rather than taking it as a flag it never reads and
// running on to exit 0, as `inspect`, `verify`, `bench` and `doctor` did until the
// forty-second session. (SIGTERM: bash starts a background job with SIGINT ignored.)
TEST_F(CliDataset, ASignalStopsACommandWithNothingToCleanUpAtOnce) {
  const std::string script = kBin + " bench loader " + out() +
                             " --epochs 1000 --threads 1 --batch-size 4 > /dev/null & pid=$!; "
                             "sleep 0.3; kill -TERM $pid; wait $pid";
  auto r = run_command("bash -c '" + script + "'");
  EXPECT_EQ(r.exit_code, 128 + 15) << r.err;
}

TEST_F(CliDataset, TokenBudgetOnImagesIsOneClearError) {
  // An image's "length" is its size in bytes: planning it as tokens would name a
  // 20 kB JPEG as a sample over the budget and suggest truncating it.
  expect_one_error_line(
      run_command(kBin + " plan " + out() + " --world-size 2 --tokens-per-rank 512"), 1,
      "--tokens-per-rank plans token datasets");
  EXPECT_EQ(run_command(kBin + " -q plan " + out() + " --world-size 2 --batch-size 4").exit_code,
            0);
}

TEST_F(CliDataset, ExistingOutputNeedsForce) {
  expect_one_error_line(run_command(kBin + " -q convert images " + src() + " " + out()), 1,
                        "--force");
  EXPECT_EQ(run_command(kBin + " -q convert images " + src() + " " + out() + " --force").exit_code,
            0);
}

TEST_F(CliDataset, SkippedInputsAreListed) {
  testing::write_text(tmp_ / "src" / "00_disc" / "broken.jpg", "\xff\xd8\xff garbage");
  auto fail = run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "o2").string());
  expect_one_error_line(fail, 1, "00_disc/broken.jpg");
  auto skip = run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "o2").string() +
                          " --on-error skip");
  EXPECT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_NE(skip.out.find("skipped 00_disc/broken.jpg: corrupt JPEG header"), std::string::npos)
      << skip.out;
  EXPECT_NE(skip.out.find("24 samples"), std::string::npos) << skip.out;
}

TEST_F(CliDataset, KeepProgressiveStoresProgressiveJpegsAsTheyAre) {
  // synth images makes about a quarter of its JPEGs progressive.
  auto rewrite =
      run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "o2").string() + " --json");
  ASSERT_EQ(rewrite.exit_code, 0) << rewrite.err;
  EXPECT_GT(nlohmann::json::parse(rewrite.out)["rewritten_as_baseline"].get<int>(), 0);
  auto keep = run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "o3").string() +
                          " --keep-progressive --json");
  ASSERT_EQ(keep.exit_code, 0) << keep.err;
  EXPECT_EQ(nlohmann::json::parse(keep.out)["rewritten_as_baseline"].get<int>(), 0);
  auto verify = run_command(kBin + " verify " + (tmp_ / "o3").string() + " --decode");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(CliDataset, MotionJpegFramesAreCountedInTheSummary) {
  testing::write_file(tmp_ / "src" / "00_disc" / "frame.jpg",
                      testing::drop_jpeg_segments(testing::make_jpeg({}), 0xC4));
  auto text = run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "m1").string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 Motion-JPEG frame(s) stored with the standard Huffman tables"),
            std::string::npos)
      << text.out;
  auto json =
      run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "m2").string() + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["with_default_huffman_tables"].get<int>(), 1);
}

TEST_F(CliDataset, RestartMarkersAreAddedUnlessAskedNotTo) {
  // The fixture's `out` was converted with the defaults: every JPEG has them.
  auto with =
      run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "r1").string() + " --json");
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(nlohmann::json::parse(with.out)["with_restart_markers"].get<int>(), 24);
  auto without = run_command(kBin + " -q convert images " + src() + " " + (tmp_ / "r2").string() +
                             " --no-restart-markers --keep-progressive --json");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(nlohmann::json::parse(without.out)["with_restart_markers"].get<int>(), 0);
  // Byte for byte: the payloads add up to the source files.
  uintmax_t sources = 0;
  for (const auto& e : fs::recursive_directory_iterator(src()))
    if (e.is_regular_file()) sources += e.file_size();
  EXPECT_EQ(nlohmann::json::parse(without.out)["payload_bytes"].get<uintmax_t>(), sources);
  for (const char* out : {"r1", "r2"}) {
    auto verify = run_command(kBin + " verify " + (tmp_ / out).string() + " --decode");
    EXPECT_EQ(verify.exit_code, 0) << out << ": " << verify.out << verify.err;
    auto sample = nlohmann::json::parse(
        run_command(kBin + " inspect " + (tmp_ / out).string() + " --sample 0 --json").out);
    EXPECT_EQ(sample["record"]["restart_layout"], std::string(out) == "r1") << out;
  }
}

// Starts a slow conversion in the background, waits until its staging directory
// exists, sends `signal`, and returns the exit code.
int interrupt_convert(const fs::path& dir, const std::string& signal) {
  const std::string src = (dir / "big").string(), out = (dir / "out").string();
  const std::string script = kBin + " -q convert images " + src + " " + out +
                             " --threads 1 & pid=$!; "
                             "for i in $(seq 1 500); do ls -a " +
                             dir.string() +
                             " | grep -q evenfeed-tmp && break; sleep 0.01; done; "
                             "kill -" +
                             signal + " $pid; wait $pid";
  return run_command("bash -c '" + script + "'").exit_code;
}

TEST(CliFaults, InterruptAndKillLeaveNothingAtTheOutput) {
  testing::TempDir tmp;
  ASSERT_EQ(run_command(kBin + " -q synth images " + (tmp / "big").string() +
                        " --count 64 --min-size 1200 --max-size 1600")
                .exit_code,
            0);
  EXPECT_EQ(interrupt_convert(tmp.path(), "INT"), 130);
  EXPECT_FALSE(fs::exists(tmp / "out"));
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename(), "big") << e.path();

  EXPECT_EQ(interrupt_convert(tmp.path(), "KILL"), 137);
  EXPECT_FALSE(fs::exists(tmp / "out"));
  // A rerun succeeds and clears the staging directory the killed run left.
  auto rerun = run_command(kBin + " -q convert images " + (tmp / "big").string() + " " +
                           (tmp / "out").string());
  EXPECT_EQ(rerun.exit_code, 0) << rerun.err;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    EXPECT_TRUE(e.path().filename() == "big" || e.path().filename() == "out") << e.path();
  }
}

TEST(CliFaults, FullDiskIsAClearErrorAndLeavesNothing) {
  testing::TempDir tmp;
  ASSERT_EQ(
      run_command(kBin + " -q synth images " + (tmp / "src").string() + " --count 40").exit_code,
      0);
  // A 256 KiB file-size limit stands in for a full disk: writes fail with EFBIG.
  auto r = run_command("bash -c 'ulimit -f 256; " + kBin + " -q convert images " +
                       (tmp / "src").string() + " " + (tmp / "out").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("disk"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename(), "src") << e.path();
}

// A report sent to a full device: the command cannot know until standard output is
// flushed at exit, which must then turn a 0 into a clear error.
TEST(CliFaults, OutputToAFullDeviceIsAnErrorNotSuccess) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  testing::TempDir tmp;
  testing::write_text(tmp / "lengths.txt", "5\n7\n3\n9\n");
  const std::string plan = kBin + " plan --lengths " + (tmp / "lengths.txt").string() +
                           " --world-size 2 --tokens-per-rank 16";
  ASSERT_EQ(run_command(plan + " > /dev/null").exit_code, 0);
  for (const std::string format : {"", " --json"}) {
    auto r = run_command("bash -c '" + plan + format + " > /dev/full'");
    EXPECT_EQ(r.exit_code, 1) << format << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("standard output failed: No space left on device"), std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace evenfeed
