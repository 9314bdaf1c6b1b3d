// ladder-trace diff A B [--step 3]: what changed from A to B: kernels removed/added, times, bytes moved
// (--name-width N: labels cut to N columns, no two rows alike).
#include <fmt/format.h>

#include <memory>

#include "base/error.h"
#include "command.h"
#include "trace/renderers/diff.h"

namespace ladder::cli {
namespace {

struct DiffArgs {
  std::string a, b, step;
  bool csv = false, json = false;
  int name_width = 60;
};

}  // namespace

Command add_diff(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<DiffArgs>();
  CLI::App* sub = app.add_subcommand("diff", "what changed from trace A to trace B");
  sub->add_option("a", a->a, "trace A (before)")->required();
  sub->add_option("b", a->b, "trace B (after)")->required();
  add_max_json(sub, shared);
  add_step(sub, a->step, "compare this step of both (3 = ProfilerStep#3; default: the mean over all steps)");
  sub->add_flag("--csv", a->csv, "the rows and the step figures as CSV (times in us per step, bytes)");
  sub->add_flag("--json", a->json, "the rows and the step figures as a JSON list")->excludes("--csv");
  sub->add_option("--name-width", a->name_width, "cut row labels to this many characters (default 60)")
      ->check(CLI::Range(20, 10000));
  return {sub, {&a->a, &a->b}, [a, &shared] {
            if (a->a == "-" && a->b == "-") throw UsageError("only one of the two traces can be standard input");
            // One trace in memory at a time.
            const uint64_t max_json = shared.max_json;
            fmt::print("{}", diff_traces([&] { return load(a->a, max_json); }, [&] { return load(a->b, max_json); },
                                         a->a, a->b, a->step, format_of(a->csv, a->json), a->name_width));
          }};
}

}  // namespace ladder::cli
