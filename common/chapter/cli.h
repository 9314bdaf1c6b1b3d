// The command-line options every chapter shares, parsed with CLI11 and validated before any GPU work.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "profiler/schedule.h"

namespace ladder {

struct CommonOptions {
  Schedule schedule;                 // --wait 1 --warmup 1 --active 3
  std::string trace_dir = "traces";  // --trace-dir
  uint64_t seed = 0;                 // --seed
  bool graph = false;                // --graph: replay the forward from a CUDA graph in the profiled steps
  bool check_only = false;           // --check-only: check the forward against the CPU and stop (no profiler)
};

// Adds --wait, --warmup, --active, --trace-dir, --seed, --graph and --check-only, with their checks (wait >= 0, warmup
// >= 0, active >= 1). 01_matmul_add gives the schedule's warmup another name, because there --warmup is the blog's
// flag.
void add_common_options(CLI::App& app, CommonOptions& options, const std::string& warmup_option = "--warmup");

// Parses argv. Returns -1 when the chapter should go on, else the exit code to return right away: 0 after --help,
// 2 after a bad option, with one line on stderr that names the option ("error: --batch: Value 0 not in range ...").
int parse_options(CLI::App& app, int argc, const char* const* argv);

// Makes sure `dir` exists (creating it) and that a file can be written in it. Throws UsageError (exit 2) naming the
// folder otherwise. Chapters call it before any GPU work.
void ensure_writable_dir(const std::string& dir);

}  // namespace ladder
