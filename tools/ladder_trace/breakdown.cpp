// ladder-trace breakdown FILE|FOLDER|-: per step: where the wall time went, GPU idle time, stream concurrency.
#include <memory>

#include "command.h"
#include "trace/renderers/breakdown_view.h"

namespace ladder::cli {
namespace {

struct BreakdownArgs {
  std::string file, step;
  bool csv = false, json = false;
};

}  // namespace

Command add_breakdown(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<BreakdownArgs>();
  CLI::App* sub = app.add_subcommand("breakdown", "per step: the step time breakdown, GPU idle time, concurrency");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  add_step(sub, a->step);
  sub->add_flag("--csv", a->csv, "the table as CSV (times in us)");
  sub->add_flag("--json", a->json, "the table as a JSON list of rows")->excludes("--csv");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] {
            const OutputFormat format = format_of(a->csv, a->json);
            print_each_rank(a->file, a->step, format, shared.max_json,
                            [&](const RankTrace&, const TraceIndex& index, int k) {
                              return breakdown_view(index, k, format);
                            });
          }};
}

}  // namespace ladder::cli
