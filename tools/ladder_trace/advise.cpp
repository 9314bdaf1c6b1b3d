// ladder-trace advise FILE|FOLDER|-: per step, what bounds it, by how much, and the rung of the ladder that teaches
// the fix (trace/analyses/advice.h). A folder: each rank's findings, then the ranks' (exposed communication, the
// slowest rank, the straggler).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "command.h"
#include "trace/analyses/advice.h"
#include "trace/analyses/peaks.h"
#include "trace/analyses/ranks_figures.h"
#include "trace/analyses/steps.h"
#include "trace/renderers/advice_view.h"

namespace ladder::cli {
namespace {

struct AdviseArgs {
  std::string file, step;
  bool csv = false, json = false;
};

void run_advise(const AdviseArgs& a, uint64_t max_json) {
  const OutputFormat format = format_of(a.csv, a.json);
  const bool folder = is_folder(a.file);
  std::vector<RankTrace> ranks = load_ranks_or_file(a.file, max_json);
  std::vector<Finding> findings;
  std::vector<RankFigures> figures;
  for (RankTrace& r : ranks) {
    check_trace(r.trace, r.path);
    const TraceIndex index(r.trace);
    const int k = find_step(index, a.step, r.path);
    const Peak peak = r.trace.devices.empty() ? Peak{} : peak_of(r.trace.devices.front().name);
    for (Finding& f : advise(index, k, peak)) {
      if (folder) f.rank = r.rank;
      findings.push_back(std::move(f));
    }
    if (folder) figures.push_back(rank_figures(r.trace, r.rank, r.path));
  }
  if (folder) {
    const RanksTable table = ranks_table(figures, a.step);
    for (Finding& f : advise_ranks(figures, table)) findings.push_back(std::move(f));
    // Each step's findings together, rank by rank, in the order the ranks ran the steps.
    auto order = [&](const Finding& f) {
      const auto at = std::find(table.steps.begin(), table.steps.end(), f.step_name);
      return std::make_pair(at - table.steps.begin(), f.rank);
    };
    std::stable_sort(findings.begin(), findings.end(),
                     [&](const Finding& x, const Finding& y) { return order(x) < order(y); });
  }
  fmt::print("{}", advice_view(findings, format));
}

}  // namespace

Command add_advise(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<AdviseArgs>();
  CLI::App* sub = app.add_subcommand("advise", "per step: what bounds it, measured, and the rung that teaches the fix");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  add_step(sub, a->step);
  sub->add_flag("--csv", a->csv, "the findings as CSV (times in us)");
  sub->add_flag("--json", a->json, "the findings as a JSON list of rows");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] { run_advise(*a, shared.max_json); }};
}

}  // namespace ladder::cli
