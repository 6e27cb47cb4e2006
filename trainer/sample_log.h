// The samples log (`evenfeed train --log-samples PREFIX`): which samples each
// optimiser step trained on, one JSON line per step in PREFIX.rank<R>.jsonl,
//   {"step": 7, "epoch": 0, "ids": [12, 40, ...]}
// (real samples only: padding slots are left out; a substituted sample appears as its
// substitute). Lines are appended and flushed one by one, so a run that is killed
// keeps every step it finished, and a resumed run appends the steps it redoes; the
// last line of a step is the one the final weights saw. The reliability tests use it
// to show that killed-and-resumed training sees every sample exactly once per epoch.
#pragma once

#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace evenfeed {

class SampleLog {
 public:
  // Does nothing when `prefix` is empty.
  SampleLog(const std::string& prefix, int rank);

  bool enabled() const { return out_.is_open(); }
  // Samples of the step in progress.
  void add(std::span<const uint64_t> ids, std::span<const uint8_t> valid);
  // Writes the step in progress as optimiser step `step` of `epoch`, and starts the next.
  void commit(uint64_t step, uint32_t epoch);

 private:
  std::string path_;
  std::ofstream out_;
  std::vector<uint64_t> ids_;
};

}  // namespace evenfeed
