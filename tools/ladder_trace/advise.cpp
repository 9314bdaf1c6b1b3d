// ladder-trace advise FILE|FOLDER|-: per step, what bounds it, by how much, and the rung of the ladder that teaches
// the fix (trace/analyses/advice.h). A folder: each rank's findings, then the ranks' (exposed communication, the
// slowest rank, the straggler).
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "command.h"
#include "trace/analyses/advice.h"
#include "trace/renderers/advice_view.h"

namespace ladder::cli {
namespace {

struct AdviseArgs {
  std::string file, step;
  bool csv = false, json = false;
};

void run_advise(const AdviseArgs& a, uint64_t max_json) {
  std::vector<RankTrace> ranks = load_ranks_or_file(a.file, max_json);
  std::vector<std::unique_ptr<TraceIndex>> indexes;
  std::vector<RankIndex> all;
  for (RankTrace& r : ranks) {
    check_trace(r.trace, r.path);
    indexes.push_back(std::make_unique<TraceIndex>(r.trace));
    all.push_back(RankIndex{r.rank, r.path, indexes.back().get()});
  }
  fmt::print("{}", advice_view(advise_all(all, is_folder(a.file), a.step), format_of(a.csv, a.json)));
}

}  // namespace

Command add_advise(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<AdviseArgs>();
  CLI::App* sub = app.add_subcommand("advise", "per step: what bounds it, measured, and the rung that teaches the fix");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  add_step(sub, a->step);
  sub->add_flag("--csv", a->csv, "the findings as CSV (times in us)");
  sub->add_flag("--json", a->json, "the findings as a JSON list of rows")->excludes("--csv");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] { run_advise(*a, shared.max_json); }};
}

}  // namespace ladder::cli
