// The command-line options every chapter shares, parsed with CLI11 and validated before any GPU work.
#pragma once

#include <cstdint>
#include <string>

#include "profiler/schedule.h"

// CLI11's App and Validator, declared only: the files that build a command line include <CLI/CLI.hpp> themselves, so
// the many that include this header for CommonOptions (through chapter/chapter.h) do not compile CLI11.
namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace ladder {

struct CommonOptions {
  Schedule schedule;                 // --wait 1 --warmup 1 --active 3
  std::string trace_dir = "traces";  // --trace-dir
  uint64_t seed = 0;                 // --seed
  bool graph = false;                // --graph: replay the forward from a CUDA graph in the profiled steps
  bool check_only = false;           // --check-only: check the forward against the CPU and stop (no profiler)
};

// The largest size a shape option takes: cuBLAS's dimensions are ints.
constexpr int64_t kMaxDim = 2147483647;

// The check of an integer option, with an exact, short message: a whole number (digits, an optional minus) from lo
// to hi, else "--batch: must be an integer from 1 to 2147483647, got 1e9". CLI11's own Range prints its bounds as
// doubles and lets a float like 1e9 through to the conversion.
// `hidden_name`: for an option hidden from --help (an alias), whose errors CLI11 prints without its name.
CLI::Validator int_range(int64_t lo, int64_t hi, const std::string& hidden_name = "");
// The same for a seed: any whole number from 0 to 2^64 - 1; "-1" is refused rather than wrapped around.
CLI::Validator uint64_any();

// Adds --wait, --warmup, --active, --trace-dir, --seed, --graph and --check-only, with their checks (wait and warmup
// 0 to 1000, active 1 to 1000). 01_matmul_add gives the schedule's warmup another name, because there --warmup is the
// blog's flag.
void add_common_options(CLI::App& app, CommonOptions& options, const std::string& warmup_option = "--warmup");

// Parses argv. Returns -1 when the chapter should go on, else the exit code to return right away: 0 after --help
// (wherever it stands, even after a bad option), 2 after a bad option, with one line on stderr that names the option
// ("error: --batch: must be an integer from 1 to 2147483647, got 0").
// It also names the app after argv[0], so --help says "Usage: build/02_linear [OPTIONS]", and remembers it for
// program_name().
int parse_options(CLI::App& app, int argc, const char* const* argv);
// argv[0] as parse_options saw it ("" before): the no-GPU message names this chapter's reference trace by it.
const std::string& program_name();

// Checks, without creating anything, that `dir` exists as a writable folder or could be created: its nearest existing
// ancestor is a folder we may write in. Throws UsageError (exit 2) naming the folder otherwise. Chapters call it
// before looking for the GPU, so a bad --trace-dir fails first and a machine without a GPU gets no empty folder.
void check_trace_dir(const std::string& dir);
// Makes sure `dir` exists (creating it) and that a file can be written in it. Throws UsageError (exit 2) naming the
// folder otherwise. Chapters call it after finding the GPU and before any GPU work.
void ensure_writable_dir(const std::string& dir);

}  // namespace ladder
