// ladder-trace memory FILE: per step and device: peak allocated/reserved, what was alive at the peak, per op.
#include <fmt/format.h>

#include <memory>

#include "base/error.h"
#include "command.h"
#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/renderers/memory_view.h"

namespace ladder::cli {
namespace {

struct MemoryArgs {
  std::string file, step;
  int width = 0;
  bool csv = false, json = false;
};

void run_memory(const MemoryArgs& a, uint64_t max_json) {
  if (is_folder(a.file)) {
    throw UsageError("memory reads one trace, and " + a.file +
                     " is a folder: give one rank's trace file from it (memory has no view of a folder of ranks)");
  }
  const Trace t = load(a.file, max_json);
  const TraceIndex index(t);
  fmt::print("{}", memory_view(index, find_step(index, a.step, a.file), format_of(a.csv, a.json),
                               width_or_terminal(a.width)));
}

}  // namespace

Command add_memory(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<MemoryArgs>();
  CLI::App* sub = app.add_subcommand("memory", "per step and device: peak allocated and reserved, the blocks alive at "
                                               "the peak and the op that made each, per-op allocation statistics");
  sub->add_option("file", a->file, "trace file recorded with profile_memory=True (.json or .json.gz), or -")
      ->required();
  add_step(sub, a->step);
  sub->add_option("--width", a->width, "characters across (default: the terminal's width)")
      ->check(CLI::Range(40, 1000));
  sub->add_flag("--csv", a->csv, "the peaks, the blocks alive at each peak and the per-op rows as CSV (bytes, us)");
  sub->add_flag("--json", a->json, "the same as a JSON list of rows")->excludes("--csv");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] { run_memory(*a, shared.max_json); }};
}

}  // namespace ladder::cli
