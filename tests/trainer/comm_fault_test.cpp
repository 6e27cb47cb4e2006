// A rank that skips a collective or dies: the others end with a clear error within
// the configured timeout, never an endless wait. Runs comm_fault_probe under mpirun.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/support/run_command.h"

namespace evenfeed {
namespace {

using testing::CommandResult;
using testing::run_command;

struct Timed {
  CommandResult result;
  double seconds = 0;
};

Timed run_probe(const std::string& scenario, int timeout_ms, const std::string& mpirun_flags = "") {
  const std::string command = std::string(EVENFEED_MPIRUN) + " " + mpirun_flags + " -np 2 " +
                              COMM_FAULT_PROBE + " " + scenario + " " + std::to_string(timeout_ms);
  const auto start = std::chrono::steady_clock::now();
  Timed timed{run_command(command), 0};
  timed.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return timed;
}

TEST(CommunicatorFaults, RankThatSkipsACollectiveTimesOutTheOthers) {
  const Timed t = run_probe("skip", 2000);
  EXPECT_NE(t.result.exit_code, 0);
  EXPECT_NE(t.result.err.find("all_reduce of 1000 float32 timed out after 2.0 s on rank 0 of 2"),
            std::string::npos)
      << t.result.err;
  EXPECT_LT(t.seconds, 2.0 + 10.0) << "the job must end soon after the timeout";
  EXPECT_GE(t.seconds, 2.0) << "and not before it";
}

TEST(CommunicatorFaults, RankThatExitsEndsTheJobThroughTheLauncher) {
  // Open MPI's default: the launcher sees the dead rank and ends the job at once.
  const Timed t = run_probe("exit", 60000);
  EXPECT_NE(t.result.exit_code, 0);
  EXPECT_NE(t.result.err.find("exited with non-zero status"), std::string::npos) << t.result.err;
  EXPECT_LT(t.seconds, 30.0) << "well before the 60 s timeout";
}

TEST(CommunicatorFaults, RankThatExitsTimesOutTheOthersWhenTheLauncherWaits) {
  // With the launcher told to keep going, the survivors' own timeout ends the job.
  const Timed t = run_probe("exit", 2000, "--mca orte_abort_on_non_zero_status 0");
  EXPECT_NE(t.result.exit_code, 0);
  EXPECT_NE(t.result.err.find("rank 0 of 2"), std::string::npos) << t.result.err;
  EXPECT_LT(t.seconds, 2.0 + 10.0);
}

}  // namespace
}  // namespace evenfeed
