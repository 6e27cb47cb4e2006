#include "trainer/communicator.h"

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

}  // namespace evenfeed
