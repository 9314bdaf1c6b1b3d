// ladder-trace kernels FILE|FOLDER|-: every kernel, copy and set: time, % of GPU time, GB/s and TFLOP/s vs a peak.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <memory>

#include "command.h"
#include "trace/analyses/peaks.h"
#include "trace/renderers/kernels_view.h"
#include "trace/text/text.h"

namespace ladder::cli {
namespace {

struct KernelsArgs {
  std::string file, step;
  KernelViewOptions view;
  double peak_tflops = 0, peak_gbps = 0;
  int width = 0;
  bool csv = false, json = false;
};

// --peak-tflops, --peak-gbps: a positive, finite number, else one line ("--peak-tflops: must be a positive number, got
// 0"), the words the Python package's peak_tflops and peak_gbps use (CLI::PositiveNumber let nan through, and named its
// bound in 309 digits).
const CLI::Validator kPositiveNumber(
    [](std::string& text) {
      double v = 0;
      if (CLI::detail::lexical_cast(text, v) && std::isfinite(v) && v > 0) return std::string();
      return "must be a positive number, got " + printable(text);
    },
    "POSITIVE");

// The peak a rank's kernels are rated against: the one given, else its GPU's datasheet.
Peak peak_for(const KernelsArgs& a, const RankTrace& r) {
  if (a.peak_tflops > 0 || a.peak_gbps > 0) return Peak{a.peak_tflops, a.peak_gbps, "given", "--peak-tflops, --peak-gbps"};
  Peak peak = r.trace.devices.empty() ? Peak{} : peak_of(r.trace.devices.front().name);
  if (peak.tflops > 0) peak.gpu += " (" + printable(r.trace.devices.front().name) + ", datasheet)";
  return peak;
}

void run_kernels(KernelsArgs& a, uint64_t max_json) {
  a.view.format = format_of(a.csv, a.json);
  if (a.view.format != OutputFormat::Text) {
    print_rank_tables(a.file, a.step, a.view.format, max_json, [&](const RankTrace& r, const TraceIndex& index, int k) {
      return kernel_frame(kernel_table(index, k, a.view.all), peak_for(a, r));
    });
    return;
  }
  // Into a pipe or a file, with no --width and no $COLUMNS: names whole (two GEMMs of one library differ at the end).
  a.view.width = a.width ? a.width : !isatty(STDOUT_FILENO) && !std::getenv("COLUMNS") ? 0 : terminal_width();
  print_each_rank(a.file, a.step, a.view.format, max_json, [&](const RankTrace& r, const TraceIndex& index, int k) {
    a.view.step = k;
    a.view.peak = peak_for(a, r);
    return kernels_view(index, a.view);
  });
}

}  // namespace

Command add_kernels(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<KernelsArgs>();
  CLI::App* sub = app.add_subcommand("kernels", "every kernel, copy and set: time, GB/s and TFLOP/s against a peak");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  add_step(sub, a->step);
  sub->add_flag("--all", a->view.all, "one row per kernel, copy and set, in time order");
  sub->add_option("--peak-tflops", a->peak_tflops, "the TFLOP/s to show % of (default: the trace's GPU's datasheet)")
      ->check(kPositiveNumber);
  sub->add_option("--peak-gbps", a->peak_gbps, "the GB/s to show % of (default: the trace's GPU's datasheet)")
      ->check(kPositiveNumber);
  sub->add_option("--width", a->width, "characters across (default: the terminal's width)")
      ->check(CLI::Range(40, 1000));
  sub->add_flag("--csv", a->csv, "the table as CSV (times in us)");
  sub->add_flag("--json", a->json, "the table as a JSON list of rows")->excludes("--csv");
  add_max_json(sub, shared);
  return {sub, {&a->file}, [a, &shared] { run_kernels(*a, shared.max_json); }};
}

}  // namespace ladder::cli
