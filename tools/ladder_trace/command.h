// One subcommand of ladder-trace: the options it registers on the app, and what it runs once they are parsed. Each
// subcommand's file (summary.cpp, timeline.cpp, ...) holds its options and calls the trace library; main.cpp parses the
// command line, checks the files and the --max-json size, runs the one subcommand given and turns errors into one line.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"
#include "trace/model/input.h"
#include "trace/model/ranks.h"
#include "trace/model/trace.h"
#include "trace/renderers/output_table.h"

namespace ladder::cli {

// What every subcommand shares: the --max-json size as given, and as bytes once main has checked it.
struct Shared {
  std::string max_json_text;
  uint64_t max_json = kDefaultMaxJsonBytes;
};

struct Command {
  CLI::App* app = nullptr;
  std::vector<const std::string*> files;  // each must exist (unless it is "-", standard input) before `run`
  std::function<void()> run;
};

// In the order `ladder-trace --help` lists them.
Command add_summary(CLI::App& app, Shared& shared);
Command add_timeline(CLI::App& app, Shared& shared);
Command add_diff(CLI::App& app, Shared& shared);
Command add_svg(CLI::App& app, Shared& shared);
Command add_open(CLI::App& app, Shared& shared);
Command add_kernels(CLI::App& app, Shared& shared);
Command add_breakdown(CLI::App& app, Shared& shared);
Command add_ranks(CLI::App& app, Shared& shared);
Command add_memory(CLI::App& app, Shared& shared);
Command add_advise(CLI::App& app, Shared& shared);

// --max-json on a subcommand that reads traces.
void add_max_json(CLI::App* sub, Shared& shared);
// --step N, the same words for every view that shows one step (or `help`'s); an empty value is refused, not read as
// every step.
CLI::Option* add_step(CLI::App* sub, std::string& step,
                      const std::string& help = "only ProfilerStep#N (3 = ProfilerStep#3)");
// --csv and --json as one format (each view makes the two flags exclude each other).
OutputFormat format_of(bool csv, bool json);
// `width`, or the terminal's when it is 0 (not given).
int width_or_terminal(int width);

// Reads a trace; what the reader skipped as unusable goes to stderr as one note, and a trace with no complete event at
// all is an error rather than an empty table.
Trace load(const std::string& file, uint64_t max_json);
void check_trace(const Trace& t, const std::string& file);
// A folder of ranks (not "-", standard input).
bool is_folder(const std::string& file);
// "== rank R: PATH ==" before each rank's section of a folder, a blank line between sections.
void print_rank_heading(const RankTrace& r, bool first);
// A view of each rank of `file` (a folder, or one trace): the view gets the rank's index and the index of `step` in it
// (-1: every step). One section per rank, as summary prints it; a folder as CSV/JSON: one table with a rank column.
using RankView = std::function<std::string(const RankTrace& rank, const TraceIndex& index, int step)>;
void print_each_rank(const std::string& file, const std::string& step, OutputFormat format, uint64_t max_json,
                     const RankView& view);
// The same for a view whose analysis returns a Table, as CSV or JSON records at full precision: a folder's tables
// joined into one with a "rank" column last (as the Python frames have it), a single trace's as it is.
using RankTable = std::function<Table(const RankTrace& rank, const TraceIndex& index, int step)>;
void print_rank_tables(const std::string& file, const std::string& step, OutputFormat format, uint64_t max_json,
                       const RankTable& table);

}  // namespace ladder::cli
