// The `evenfeed` subcommands. Each add_* registers its flags on the app and sets
// `run` to the function that executes it; main() catches errors and exits.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>

#include "core/interrupt.h"

namespace evenfeed::cli {

// CLI11 reads "-1" into an unsigned option as 2^64 - 1: `--seed -1` planned with seed
// 18446744073709551615, `--max-batch-size -1` meant no cap and `--stop-at-step -1` never
// stopped, all silently. Every unsigned option without a range of its own takes this.
inline const CLI::Validator kNotNegative(
    [](std::string& value) -> std::string {
      return value.starts_with('-') ? "must be a whole number from 0 up, got " + value
                                    : std::string();
    },
    "", "not negative");

// A rate or size that only makes sense above 0 (`--lr 0` or `--lr -0.1` used to fall back
// to the default rate without a word).
inline const CLI::Validator kAboveZero(
    [](std::string& value) -> std::string {
      size_t used = 0;
      double number = 0;
      try {
        number = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      return used == value.size() && number > 0 ? std::string()
                                                : "must be a number above 0, got " + value;
    },
    "", "above zero");

// What the chosen subcommand runs; returns the process exit code.
using Runner = std::function<int()>;

// A command that reads the interrupt flag (between images, sequences, steps) runs under
// an InterruptGuard: the first Ctrl-C or SIGTERM sets the flag, and the command cleans
// up and exits 130 (a second one stops the process). The others (inspect, verify,
// bench, doctor, which leave nothing half-written) run without one, so the default
// action stops them at once instead of a flag no one reads swallowing the signal.
inline Runner interruptible(Runner body) {
  return [body = std::move(body)] {
    InterruptGuard guard;
    return body();
  };
}

void add_convert(CLI::App& app, Runner& run);
void add_inspect(CLI::App& app, Runner& run);
void add_verify(CLI::App& app, Runner& run);
void add_synth(CLI::App& app, Runner& run);
void add_plan(CLI::App& app, Runner& run);
void add_bench(CLI::App& app, Runner& run);
void add_doctor(CLI::App& app, Runner& run);
void add_train(CLI::App& app, Runner& run);
// bench allreduce and bench h2d, under the bench command.
void add_bench_comm(CLI::App* bench, Runner& run);

}  // namespace evenfeed::cli
