#include "tools/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "core/log.h"

namespace evenfeed::cli {

Progress::Progress(std::string label)
    : label_(std::move(label)),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

void Progress::update(uint64_t done, uint64_t total) {
  if (quiet() || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  if (terminal_) {
    if (done != total && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const int width = 30, filled = static_cast<int>(fraction * width);
    std::fprintf(stderr, "\r%s [%s%s] %3.0f%% %llu/%llu %.0f/s ", label_.c_str(),
                 std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                 100 * fraction, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total), rate);
    drawn_ = true;
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  if (decile == last_decile_) return;
  last_decile_ = decile;
  log_info("{}: {}/{} ({:.0f}%), {:.0f}/s", label_, done, total, 100 * fraction, rate);
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace evenfeed::cli
