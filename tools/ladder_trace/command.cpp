// What the subcommands of ladder-trace share: reading a trace with its note, --max-json, --step, --csv/--json.
#include "command.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "base/error.h"
#include "trace/analyses/steps.h"
#include "trace/model/json_read.h"
#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder::cli {

void add_max_json(CLI::App* sub, Shared& shared) {
  sub->add_option("--max-json", shared.max_json_text,
                  "the most JSON one trace may hold, gzip inflated (bytes, or with K/M/G; default 8G)");
}

CLI::Option* add_step(CLI::App* sub, std::string& step, const std::string& help) {
  static const CLI::Validator named(
      [](std::string& s) { return std::string(s.empty() ? "must name a step (3 = ProfilerStep#3), got ''" : ""); }, "");
  return sub->add_option("--step", step, help)->check(named);
}

OutputFormat format_of(bool csv, bool json) {
  return csv ? OutputFormat::Csv : json ? OutputFormat::Json : OutputFormat::Text;
}

int width_or_terminal(int width) { return width ? width : terminal_width(); }

void check_trace(const Trace& t, const std::string& file) {
  if (!t.load_note.empty()) fmt::print(stderr, "note: {}\n", t.load_note);
  if (t.events.empty())
    throw TraceError("trace " + file + " has no events (no \"ph\": \"X\" event with an integer pid)");
  // A Chrome trace from another tool: complete events, none of the categories torch.profiler writes.
  for (const Event& e : t.events) {
    if (e.cat != Cat::Other) return;
  }
  throw TraceError(fmt::format("trace {} holds no PyTorch profiler event: none of its {} events is a cpu_op, "
                               "user_annotation, cuda_runtime, kernel, gpu_memcpy or other category torch writes",
                               file, t.events.size()));
}

Trace load(const std::string& file, uint64_t max_json) {
  Trace t = load_trace(file, max_json);
  check_trace(t, file);
  return t;
}

bool is_folder(const std::string& file) { return file != "-" && std::filesystem::is_directory(file); }

void print_rank_heading(const RankTrace& r, bool first) {
  fmt::print("{}== rank {}: {} ==\n", first ? "" : "\n", r.rank, r.path);
}

void print_each_rank(const std::string& file, const std::string& step, OutputFormat format, uint64_t max_json,
                     const RankView& view) {
  const bool folder = is_folder(file);
  const std::vector<RankTrace> ranks = load_ranks_or_file(file, max_json);
  const bool one_table = folder && format != OutputFormat::Text;
  std::vector<std::pair<int, std::string>> records;
  for (const RankTrace& r : ranks) {
    check_trace(r.trace, r.path);
    const TraceIndex index(r.trace);
    const int k = find_step(index, step, r.path);
    if (folder && !one_table) print_rank_heading(r, &r == &ranks.front());
    const std::string text = view(r, index, k);
    if (one_table) {
      records.emplace_back(r.rank, text);
    } else {
      fmt::print("{}", text);
    }
  }
  if (!records.empty()) fmt::print("{}", join_ranks(records, format));
}

void print_rank_tables(const std::string& file, const std::string& step, OutputFormat format, uint64_t max_json,
                       const RankTable& table) {
  const std::vector<RankTrace> ranks = load_ranks_or_file(file, max_json);
  std::vector<std::pair<int, Table>> tables;
  for (const RankTrace& r : ranks) {
    check_trace(r.trace, r.path);
    const TraceIndex index(r.trace);
    tables.emplace_back(r.rank, table(r, index, find_step(index, step, r.path)));
  }
  if (tables.empty()) return;
  fmt::print("{}", table_records(is_folder(file) ? join_rank_tables(tables) : tables.front().second, format));
}

}  // namespace ladder::cli
