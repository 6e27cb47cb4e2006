// The `evenfeed` subcommands. Each add_* registers its flags on the app and sets
// `run` to the function that executes it; main() catches errors and exits.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace evenfeed::cli {

// What the chosen subcommand runs; returns the process exit code.
using Runner = std::function<int()>;

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
