#include "trainer/communicator.h"

#include <algorithm>

namespace evenfeed {

namespace {

class CompletedWork : public Work {
 public:
  bool done() override { return true; }
  void wait() override {}
};

}  // namespace

std::unique_ptr<Work> completed_work() {
  return std::make_unique<CompletedWork>();
}

double covered_seconds(std::vector<WorkSpan> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const WorkSpan& a, const WorkSpan& b) { return a.start < b.start; });
  double covered = 0, reached = 0;
  bool first = true;
  for (const WorkSpan& s : spans) {
    if (s.end <= s.start) continue;
    const double from = first ? s.start : std::max(s.start, reached);
    if (s.end > from) covered += s.end - from;
    reached = first ? s.end : std::max(reached, s.end);
    first = false;
  }
  return covered;
}

}  // namespace evenfeed
