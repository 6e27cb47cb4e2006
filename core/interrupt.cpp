#include "core/interrupt.h"

#include <signal.h>

#include <atomic>

#include "core/error.h"

namespace evenfeed {
namespace {

std::atomic<int> g_signal{0};
struct sigaction g_old_int, g_old_term;

void on_signal(int signal_number) {
  g_signal.store(signal_number);
  ::signal(signal_number, SIG_DFL);  // a second signal stops the process at once
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_old_int);
  ::sigaction(SIGTERM, &action, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

bool interrupted() {
  return g_signal.load(std::memory_order_relaxed) != 0;
}

void throw_if_interrupted(const char* what) {
  int s = g_signal.load();
  if (s != 0) fail("{} interrupted by signal {}; nothing was written to the output", what, s);
}

}  // namespace evenfeed
