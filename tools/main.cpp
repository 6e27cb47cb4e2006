// The `evenfeed` command: parses flags and calls the library. Every failure ends as
// one line on stderr ("evenfeed: error: ...") and a non-zero exit: 1 for errors, 2 for
// bad usage, 130 for an interrupt.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "tools/commands.h"

namespace {

int report_usage_error(const CLI::App& app, const CLI::ParseError& e) {
  std::string message = e.what();
  const CLI::App* sub = app.get_subcommands().empty() ? &app : app.get_subcommands().back();
  std::string name = sub == &app ? "evenfeed" : "evenfeed " + sub->get_name();
  std::fprintf(stderr, "evenfeed: error: %s; see `%s --help`\n", message.c_str(), name.c_str());
  return 2;
}

// Whether everything written to standard output reached it. A report redirected to a
// full disk fails only when the buffer is flushed, after the command returned 0, so
// the exit status would say a truncated report is whole.
bool stdout_written(std::string& why) {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return true;
  why = error != 0 ? std::strerror(error) : "a write failed (is the disk full?)";
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "evenfeed: feed every GPU of a data-parallel job evenly.\n"
      "Datasets: convert, inspect, verify, synth. Planning: plan. Training: train. Measuring: "
      "bench, doctor. Run "
      "`evenfeed "
      "COMMAND --help` "
      "for details."};
  app.set_version_flag("--version", "evenfeed " EVENFEED_VERSION);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Print only results, warnings and errors");
  app.require_subcommand(1);
  evenfeed::cli::Runner run;
  evenfeed::cli::add_convert(app, run);
  evenfeed::cli::add_inspect(app, run);
  evenfeed::cli::add_verify(app, run);
  evenfeed::cli::add_synth(app, run);
  evenfeed::cli::add_plan(app, run);
  evenfeed::cli::add_bench(app, run);
  evenfeed::cli::add_doctor(app, run);
  evenfeed::cli::add_train(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report_usage_error(app, e);
  }
  evenfeed::set_quiet(quiet);
  // Past a file-size limit (ulimit -f) writes then fail with EFBIG, which we report
  // like a full disk, instead of the process being killed mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  // convert, synth, plan and train install the interrupt guard themselves (interruptible,
  // tools/commands.h); the flag they set outlives it, so an interrupt still exits 130.
  try {
    const int code = run();
    if (std::string why; !stdout_written(why)) {
      std::fprintf(stderr,
                   "evenfeed: error: writing the output to standard output failed: %s; free "
                   "space where it goes or send it elsewhere\n",
                   why.c_str());
      return code != 0 ? code : 1;
    }
    return code;
  } catch (const evenfeed::Error& e) {
    std::fprintf(stderr, "evenfeed: error: %s\n", e.what());
    return evenfeed::interrupted() ? 130 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evenfeed: error: %s\n", e.what());
    return 1;
  }
}
