// Turning SIGINT and SIGTERM into a flag that long-running work polls, so an interrupt
// unwinds normally (temporary output removed, files closed) instead of killing the
// process mid-write. A second signal falls back to the default action.
#pragma once

namespace evenfeed {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

bool interrupted();
// Throws an Error saying `what` was interrupted when a signal has arrived.
void throw_if_interrupted(const char* what);

}  // namespace evenfeed
