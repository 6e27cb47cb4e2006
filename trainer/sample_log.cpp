#include "trainer/sample_log.h"

#include <fmt/format.h>

#include "core/error.h"

namespace evenfeed {

SampleLog::SampleLog(const std::string& prefix, int rank) {
  if (prefix.empty()) return;
  path_ = fmt::format("{}.rank{}.jsonl", prefix, rank);
  out_.open(path_, std::ios::app);
  EVENFEED_CHECK(out_.good(), "{}: cannot open the samples log for appending; check the directory",
                 path_);
}

void SampleLog::add(std::span<const uint64_t> ids, std::span<const uint8_t> valid) {
  if (!enabled()) return;
  for (size_t i = 0; i < ids.size(); ++i)
    if (valid.empty() || valid[i] != 0) ids_.push_back(ids[i]);
}

void SampleLog::commit(uint64_t step, uint32_t epoch) {
  if (!enabled()) return;
  out_ << fmt::format("{{\"step\": {}, \"epoch\": {}, \"ids\": [{}]}}\n", step, epoch,
                      fmt::join(ids_, ", "))
       << std::flush;
  EVENFEED_CHECK(out_.good(), "{}: writing the samples log failed (disk full?)", path_);
  ids_.clear();
}

}  // namespace evenfeed
