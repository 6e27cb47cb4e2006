// Runs a shell command and captures its exit code, stdout and stderr, so the tests
// can drive the real `evenfeed` binary the way a user does.
#pragma once

#include <string>

namespace evenfeed::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandResult run_command(const std::string& command);
// The evenfeed binary built with this test suite, quoted for a shell.
std::string evenfeed_bin();

}  // namespace evenfeed::testing
