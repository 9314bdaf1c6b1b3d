// ladder-trace: read a trace file (one of ours, or one torch.profiler wrote) and print what is in it.
//
//   ladder-trace summary FILE           the key_averages()-style table, then kernels and GPU busy time per step
//   ladder-trace timeline FILE          one step as CPU and GPU lanes on one time axis
//   ladder-trace diff A B [--step 3]    what changed from A to B: kernels removed/added, times, bytes moved
//   ladder-trace open FILE              the file in the Perfetto UI: prints its link, serves it once on 127.0.0.1:9001
//
// Example: ladder-trace diff traces/reference/h100/03_simple_mlp.json traces/reference/h100/03_fused_mlp.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "base/error.h"
#include "open_in_perfetto.h"
#include "trace/diff.h"
#include "trace/index.h"
#include "trace/json_read.h"
#include "trace/key_averages.h"
#include "trace/ladder_ops_work.h"
#include "trace/steps.h"
#include "trace/text.h"
#include "trace/timeline.h"
#include "trace/trace.h"

using namespace ladder;

namespace {

// Reads a trace; what the reader skipped as unusable goes to stderr as one note, and a trace with no complete event
// at all is an error rather than an empty table.
Trace load(const std::string& file) {
  Trace t = load_trace(file);
  if (!t.load_note.empty()) fmt::print(stderr, "note: {}\n", t.load_note);
  if (t.events.empty())
    throw TraceError("trace " + file + " has no events (no \"ph\": \"X\" event with an integer pid)");
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ladder-trace: summary, timeline, diff and open (in Perfetto) of Kineto/PyTorch-format trace files"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ladder-trace 1.0 (reads Kineto/PyTorch and Chrome JSON traces)");
  std::string file, file_b;
  int rows = 100, step = -1, width = 0;

  CLI::App* summary = app.add_subcommand("summary", "the summary table and the per-step statistics");
  summary->add_option("file", file, "trace file")->required()->check(CLI::ExistingFile);
  summary->add_option("--rows", rows, "at most this many table rows")->check(CLI::Range(1, 1000000));

  CLI::App* tl = app.add_subcommand("timeline", "one step drawn as CPU and GPU lanes");
  tl->add_option("file", file, "trace file")->required()->check(CLI::ExistingFile);
  tl->add_option("--step", step, "which step (0 = the first in the file; default: the last)");
  tl->add_option("--width", width, "characters across (default: the terminal's width)")->check(CLI::Range(40, 1000));

  CLI::App* diff = app.add_subcommand("diff", "what changed from trace A to trace B");
  diff->add_option("a", file, "trace A (before)")->required()->check(CLI::ExistingFile);
  diff->add_option("b", file_b, "trace B (after)")->required()->check(CLI::ExistingFile);
  std::string diff_step;
  diff->add_option("--step", diff_step, "compare this step of both (3 = ProfilerStep#3; default: the mean over all steps)");

  CLI::App* op = app.add_subcommand("open", "the file in the Perfetto UI: prints the link, serves the file once on "
                                               "127.0.0.1:9001, opens a browser where there is one");
  op->add_option("file", file, "trace file")->required()->check(CLI::ExistingFile);
  bool no_browser = false;
  op->add_flag("--no-browser", no_browser, "print the link only; start no browser");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // `ladder-trace summary --bogus --help`: the help asked for wins over the error that came first.
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
        const CLI::App* sub = nullptr;
        for (const CLI::App* s : {summary, tl, diff, op}) {
          if (std::find(argv + 1, argv + argc, s->get_name()) != argv + argc) sub = s;
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
  try {
    if (*op) {  // serves the bytes as they are: no need to read the trace
      open_in_perfetto(file, !no_browser);
      return 0;
    }
    register_ladder_ops_work();  // diff shows the bytes our own ops (ladder::gelu_mul, ...) move
    const Trace t = load(file);
    if (*summary) {
      const TraceIndex index(t);
      fmt::print("{}\n{}", summary_table(index, rows), regime_table(index));
    } else if (*tl) {
      fmt::print("{}", timeline(t, step, width ? width : terminal_width()));
    } else if (*diff) {
      fmt::print("{}", diff_traces(t, load(file_b), file, file_b, diff_step));
    }
    // Done. A large trace is millions of events: handing their memory back one by one takes a second or two that
    // the process's exit does at once, so leave without running the destructors.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
