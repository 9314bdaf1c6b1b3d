// ladder-trace: read a trace file (one of ours, or one torch.profiler wrote) and print what is in it.
//
//   ladder-trace summary FILE|FOLDER|-  the key_averages()-style table, then kernels and GPU busy time per step
//   ladder-trace timeline FILE|FOLDER   one step as CPU and GPU lanes on one time axis (a folder: every rank)
//   ladder-trace diff A B [--step 3]    what changed from A to B: kernels removed/added, times, bytes moved
//   ladder-trace svg FILE -o OUT.svg    one step (or a window, or one op's subtree: --focus) as a picture
//   ladder-trace open FILE              the file in the Perfetto UI: prints its link, serves it once on 127.0.0.1:9001
//   ladder-trace kernels FILE|FOLDER|-  every kernel, copy and set: time, % of GPU time, GB/s and TFLOP/s vs a peak
//   ladder-trace breakdown FILE|FOLDER|- per step: where the wall time went, GPU idle time, stream concurrency
//   ladder-trace ranks FOLDER           per step and rank: step time, communication vs computation, who waits for whom
//   ladder-trace memory FILE            per step and device: peak allocated/reserved, what was alive at the peak, per op
//   ladder-trace advise FILE|FOLDER|-   per step: what bounds it, measured, and the rung of the ladder that teaches the fix
//
// Each subcommand is one file beside this one (summary.cpp, ...); this one parses the command line, checks the files
// and --max-json, runs the subcommand given, and turns every error into one line and a non-zero exit (2: the command
// line, 1: the trace).
//
// Example: ladder-trace diff traces/reference/h100/03_simple_mlp.json traces/reference/h100/03_fused_mlp.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "command.h"
#include "trace/text/text.h"
#include "unknown_word.h"
#include "work/ladder_ops.h"

using namespace ladder;
using namespace ladder::cli;

namespace {

// CLI11's parse error as one line; but `ladder-trace summary --bogus --help`: the help asked for wins over the error
// that came first. The exit status.
int parse_error(const CLI::ParseError& e, int argc, char** argv, const CLI::App& app,
                const std::vector<Command>& commands) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      const CLI::App* sub = nullptr;
      for (const Command& c : commands) {
        if (std::find(argv + 1, argv + argc, c.app->get_name()) != argv + argc) sub = c.app;
      }
      fmt::print("{}", sub ? sub->help(argv[0]) : app.help());
      return 0;
    }
  }
  std::string msg = e.what();  // one line that names the option or the file
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  fmt::print(stderr, "error: {}\n", msg);
  return 2;
}

// --max-json as bytes: a number, with K, M or G, up to 2^62 bytes (a larger double, 1e30G, has no uint64 value, and
// converting it would be undefined). False for anything else.
bool parse_size(const std::string& text, uint64_t& bytes) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit = end ? end : "";
  const double scale = unit.empty()  ? 1
                       : unit == "K" ? 1024.0
                       : unit == "M" ? 1048576.0
                       : unit == "G" ? 1073741824.0
                                     : -1;
  if (!(v > 0) || scale < 0 || !(v * scale <= 4611686018427387904.0)) return false;
  bytes = static_cast<uint64_t>(v * scale);
  return true;
}

// The files the subcommand names exist, and --max-json is a size: else one line, and the exit status 2.
int check_arguments(const Command& command, Shared& shared) {
  for (const std::string* f : command.files) {
    if (!f->empty() && *f != "-" && !std::filesystem::exists(*f)) {
      fmt::print(stderr, "error: file does not exist: {}\n", *f);
      return 2;
    }
  }
  if (!shared.max_json_text.empty() && !parse_size(shared.max_json_text, shared.max_json)) {
    fmt::print(stderr, "error: --max-json {}: a size in bytes, or with K, M or G (8G), up to 2^62 bytes\n",
               printable(shared.max_json_text));
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ladder-trace: tables, timelines, pictures, diffs and summary views of Kineto/PyTorch-format traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ladder-trace 1.0 (reads Kineto/PyTorch and Chrome JSON traces)");
  Shared shared;
  const std::vector<Command> commands = {add_summary(app, shared), add_timeline(app, shared),  add_diff(app, shared),
                                         add_svg(app, shared),     add_open(app, shared),      add_kernels(app, shared),
                                         add_breakdown(app, shared), add_ranks(app, shared), add_memory(app, shared),
                                         add_advise(app, shared)};
  if (argc == 1) {  // no subcommand: say which there are, in one line
    fmt::print(stderr, "error: a subcommand is needed ({}); ladder-trace --help says what each does\n",
               subcommand_names(app));
    return 2;
  }
  if (const std::string bad = unknown_word(argc, argv, app); !bad.empty()) {
    fmt::print(stderr, "error: {}\n", bad);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return parse_error(e, argc, argv, app, commands);
  }
  const Command* command = nullptr;
  for (const Command& c : commands) {
    if (*c.app) command = &c;
  }
  if (const int status = check_arguments(*command, shared); status != 0) return status;
  try {
    ladder::register_ladder_ops_work();  // the bytes and FLOPs of the ladder's own ops (common/work)
    command->run();
    // Done. A large trace is millions of events: handing their memory back one by one takes a second or two that the
    // process's exit does at once, so leave without running the destructors.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
  } catch (const UsageError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
