// evenfeed doctor and bench allreduce, run as a user runs them: alone and under mpirun.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace evenfeed {
namespace {

using testing::evenfeed_bin;
using testing::run_command;

TEST(DoctorCli, AloneReportsAWorldOfOneAndPassesItsChecks) {
  auto r = run_command(evenfeed_bin() + " doctor --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["world_size"], 1);
  EXPECT_EQ(j["failed_checks_all_ranks"], 0);
  EXPECT_EQ(j["checks"][0]["name"], "all-reduce");
  EXPECT_EQ(j["checks"][0]["status"], "OK");
  // Without a GPU the GPU checks say so rather than passing; with one, they pass.
  EXPECT_EQ(j["checks"][1]["name"], "h2d bandwidth");
  EXPECT_EQ(j["checks"][2]["name"], "gpu products");
  for (int k : {1, 2}) EXPECT_EQ(j["checks"][k]["status"], j["gpus"].empty() ? "SKIPPED" : "OK");
}

TEST(DoctorCli, UnderMpirunEveryRankJoinsTheAllReduce) {
  auto r =
      run_command(std::string(EVENFEED_MPIRUN) + " -np 3 " + evenfeed_bin() + " doctor --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // only rank 0 prints
  EXPECT_EQ(j["world_size"], 3);
  EXPECT_EQ(j["hosts"].size(), 3u);
  EXPECT_EQ(j["checks"][0]["status"], "OK");
  EXPECT_NE(j["checks"][0]["detail"].get<std::string>().find("3 ranks (mpi)"), std::string::npos);
}

TEST(DoctorCli, ABadDatasetFailsTheLoaderCheckAndTheExitCode) {
  testing::TempDir dir;
  auto r = run_command(evenfeed_bin() + " doctor --seconds 0.5 --data " +
                       (dir.path() / "missing").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAILED   loader:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot open the manifest"), std::string::npos) << r.out;
}

TEST(BenchAllreduceCli, ReportsBusBandwidthUnderMpirun) {
  auto r = run_command(std::string(EVENFEED_MPIRUN) + " -np 2 " + evenfeed_bin() +
                       " bench allreduce --min-bytes 4096 --max-bytes 65536 --iterations 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 5u);
  for (const auto& row : j["rows"]) {
    // Two ranks: busbw = algbw x 2(n-1)/n = algbw.
    EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), row["algbw_gbps"].get<double>());
    EXPECT_GT(row["algbw_gbps"].get<double>(), 0);
  }
}

}  // namespace
}  // namespace evenfeed
