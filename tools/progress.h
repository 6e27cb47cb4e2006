// Progress for long commands: a redrawn bar on a terminal, a plain line per 10%
// otherwise (logs stay readable), nothing with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace evenfeed::cli {

class Progress {
 public:
  explicit Progress(std::string label);
  void update(uint64_t done, uint64_t total);
  void finish();

 private:
  std::string label_;
  bool terminal_;
  int last_decile_ = -1;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace evenfeed::cli
