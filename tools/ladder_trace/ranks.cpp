// ladder-trace ranks FOLDER: per step and rank: step time, communication vs computation, who waits for whom.
#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "trace/renderers/ranks_view.h"

namespace ladder::cli {
namespace {

struct RanksArgs {
  std::string folder, step;
  bool csv = false, json = false;
};

}  // namespace

Command add_ranks(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<RanksArgs>();
  CLI::App* sub = app.add_subcommand(
      "ranks", "a folder of ranks: step time per rank, communication vs computation, who waits for whom");
  sub->add_option("folder", a->folder, "a folder of traces, one per rank (a single file is one rank)")->required();
  add_step(sub, a->step);
  sub->add_flag("--csv", a->csv, "one record per step and rank, as CSV (times in us)");
  sub->add_flag("--json", a->json, "one record per step and rank, as a JSON list")->excludes("--csv");
  add_max_json(sub, shared);
  return {sub, {&a->folder}, [a, &shared] {
            fmt::print("{}", ranks_view(load_rank_figures(a->folder, shared.max_json), a->step,
                                        format_of(a->csv, a->json)));
          }};
}

}  // namespace ladder::cli
