// ladder-trace summary FILE|FOLDER|-: the key_averages()-style table, then kernels and GPU busy time per step (a
// folder: one table per rank, or as --csv/--json one table with a rank column; gzip read as such; - is standard input).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <utility>

#include "command.h"
#include "trace/model/index.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/steps_table.h"

namespace ladder::cli {
namespace {

struct SummaryArgs {
  std::string file, step;
  int rows = 100;
  TableOptions table;
  bool csv = false, json = false, steps_only = false;
};

// A folder: every trace in it is one rank, read in parallel; one table per rank, each headed by its rank (as CSV/JSON,
// one table with a rank column, which pandas or jq read at once).
void run_summary(SummaryArgs& a, uint64_t max_json) {
  a.table.row_limit = a.rows;
  a.table.format = format_of(a.csv, a.json);
  const std::vector<RankTrace> ranks = load_ranks_or_file(a.file, max_json);
  const bool folder = is_folder(a.file);
  std::vector<std::pair<int, std::string>> records;  // a folder as CSV/JSON: one table, with a rank column
  for (const RankTrace& r : ranks) {
    check_trace(r.trace, r.path);
    const TraceIndex whole(r.trace);
    // Without --step the whole trace is the part: no copy of its events and no second index (on a 1 GB trace they
    // were 1.3 GB more at the peak).
    const int k = find_step(whole, a.step, r.path);
    std::optional<Trace> part;
    std::optional<TraceIndex> part_index;
    if (k >= 0) part_index.emplace(part.emplace(step_trace(whole, k)));
    const TraceIndex& index = k >= 0 ? *part_index : whole;
    if (a.table.format != OutputFormat::Text) {
      records.emplace_back(r.rank, a.steps_only ? regime_table(index, a.table.format) : summary_table(index, a.table));
      continue;
    }
    if (folder) print_rank_heading(r, &r == &ranks.front());
    if (a.steps_only) {
      fmt::print("{}", regime_table(index));
    } else {
      if (k >= 0) fmt::print("{} of {}\n", whole.steps()[static_cast<size_t>(k)].name, r.path);
      fmt::print("{}\n{}", summary_table(index, a.table), regime_table(index));
    }
  }
  if (!records.empty()) fmt::print("{}", folder ? join_ranks(records, a.table.format) : records[0].second);
}

}  // namespace

Command add_summary(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<SummaryArgs>();
  CLI::App* sub = app.add_subcommand("summary", "the summary table and the per-step statistics");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  sub->add_option("--rows", a->rows, "at most this many table rows")->check(CLI::Range(1, 1000000));
  add_step(sub, a->step);
  sub->add_option("--sort", a->table.sort_by,
                  "torch's sort key: cpu_time_total, self_cpu_time_total, cuda_time_total (default), "
                  "self_cuda_time_total, cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage, "
                  "self_cuda_memory_usage, count, cpu_time, cuda_time");
  sub->add_option("--name-width", a->table.name_width, "cut names to this many characters (torch: 55)")
      ->check(CLI::Range(8, 10000));
  sub->add_flag("--group-by-input-shape", a->table.group_by_input_shape,
                "one row per name and input shapes, with torch's Input Shapes column");
  sub->add_option("--filter", a->table.filter, "only rows whose name contains this regular expression (ECMAScript)");
  sub->add_flag("--csv", a->csv, "the table as CSV (times in us, memory in bytes; a folder: one, with a rank column)");
  sub->add_flag("--json", a->json, "the table as a JSON list of rows (a folder: one list, with a rank field)")
      ->excludes("--csv");
  sub->add_flag("--steps", a->steps_only,
                "only the per-step table (kernels, wall, GPU busy, CPU launch and sync), also as --csv/--json");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] { run_summary(*a, shared.max_json); }};
}

}  // namespace ladder::cli
