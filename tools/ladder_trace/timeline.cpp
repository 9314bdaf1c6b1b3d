// ladder-trace timeline FILE|FOLDER: one step as CPU and GPU lanes on one time axis (a folder: every rank).
#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "trace/analyses/ranks_lanes.h"
#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/renderers/ranks_timeline.h"
#include "trace/renderers/timeline.h"

namespace ladder::cli {
namespace {

struct TimelineArgs {
  std::string file, step;
  int width = 0;
};

void run_timeline(const TimelineArgs& a, uint64_t max_json) {
  if (is_folder(a.file)) {  // every rank on one axis
    fmt::print("{}", ranks_timeline(ranks_picture(a.file, a.step, max_json), width_or_terminal(a.width)));
    return;
  }
  const Trace t = load(a.file, max_json);
  const TraceIndex index(t);
  fmt::print("{}", timeline(t, find_step(index, a.step, a.file), width_or_terminal(a.width)));
}

}  // namespace

Command add_timeline(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<TimelineArgs>();
  CLI::App* sub = app.add_subcommand("timeline", "one step drawn as CPU and GPU lanes");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks (all on "
                                   "one axis)")->required();
  add_step(sub, a->step, "ProfilerStep#N (3 = ProfilerStep#3; default: the last step)");
  add_max_json(sub, shared);
  sub->add_option("--width", a->width, "characters across (default: the terminal's width)")
      ->check(CLI::Range(40, 1000));
  return {sub, {&a->file}, [a, &shared] { run_timeline(*a, shared.max_json); }};
}

}  // namespace ladder::cli
