// The fuzz target: any bytes through the trace reader and, when they read as a trace, through every view and renderer
// ladder-trace has (the summary table in each format, steps, timeline, diff, kernels, breakdown, memory and its SVG,
// advise and the analyses behind it (idle time, launch statistics, kernel sequences, the critical path),
// the SVG of a step, a window and one op's subtree, the rank views, HTA's window) and through the writer and the
// reader again, which must give back the same events (trace/tests/round_trip.h). A TraceError from the first read is
// the reader's answer to bad input and ends the run quietly; a view may answer TraceError or UsageError too (one
// line: no [memory] record, a window the trace does not hold). Anything else (a crash, a hang, a sanitizer report,
// another exception, a trace we wrote that we cannot read back or that reads back different) is a bug. Built two
// ways (tools/CMakeLists.txt): with LADDER_FUZZ=ON as a libFuzzer binary, and always as trace-fuzz-replay, which
// feeds the committed corpus through this same function under ctest.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "trace/analyses/advice.h"
#include "trace/analyses/critical_path.h"
#include "trace/analyses/hta_window.h"
#include "trace/analyses/idle_time.h"
#include "trace/analyses/kernel_sequences.h"
#include "trace/analyses/launch_stats.h"
#include "trace/analyses/memory.h"
#include "trace/analyses/peaks.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"
#include "trace/model/overlap.h"
#include "trace/model/trace.h"
#include "trace/renderers/advice_view.h"
#include "trace/renderers/breakdown_view.h"
#include "trace/renderers/diff.h"
#include "trace/renderers/kernels_view.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/memory_svg.h"
#include "trace/renderers/memory_view.h"
#include "trace/renderers/ranks_view.h"
#include "trace/renderers/steps_table.h"
#include "trace/renderers/svg.h"
#include "trace/renderers/timeline.h"
#include "trace/tests/round_trip.h"

namespace {

using namespace ladder;

// A view's one-line answers to a trace it cannot show are fine; every other way out is not.
void view(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError&) {
  } catch (const UsageError&) {
  }
}

void every_view(const Trace& t) {
  const TraceIndex index(t);
  const int last = static_cast<int>(index.steps().size()) - 1;
  for (const OutputFormat format : {OutputFormat::Text, OutputFormat::Csv, OutputFormat::Json}) {
    TableOptions table;
    table.format = format;
    table.group_by_input_shape = format == OutputFormat::Csv;
    view([&] { (void)summary_table(index, table); });
    view([&] { (void)regime_table(index, format); });
    for (const int k : {-1, 0, last}) {
      KernelViewOptions kv;
      kv.step = k;
      kv.all = format == OutputFormat::Csv;
      kv.format = format;
      kv.width = 80;
      kv.peak = peak_of(t.devices.empty() ? std::string("NVIDIA H100 80GB HBM3") : t.devices.front().name);
      view([&] { (void)kernels_view(index, kv); });
      view([&] { (void)breakdown_view(index, k, format); });
      view([&] { (void)memory_view(index, k, format, 80); });
    }
  }
  view([&] { (void)step_stats(index); });
  view([&] { (void)timeline(t, -1, 80); });
  view([&] { (void)timeline(t, 0, 40); });
  view([&] { (void)diff_traces(t, t); });
  view([&] { (void)memory_report(index, -1, true); });
  view([&] { (void)overlap_note(t); });
  view([&] { (void)hta_temporal_breakdown(hta_kept_activities(t)); });
  // advise and the analyses behind it: every step, one step, each format; the whole trace and this trace as a folder.
  for (const int k : {-1, 0, last}) {
    for (const OutputFormat format : {OutputFormat::Text, OutputFormat::Csv, OutputFormat::Json})
      view([&] { (void)advice_view(advise(index, k, peak_of("NVIDIA H100 80GB HBM3")), format); });
    view([&] { (void)critical_path_table(critical_path(index, k), index); });
  }
  view([&] {
    const std::vector<RankIndex> two = {{0, "rank0.json", &index}, {1, "rank1.json", &index}};
    (void)advice_view(advise_all(two, true, ""), OutputFormat::Csv);
  });
  view([&] { (void)idle_time_table(idle_time(index), index); });
  view([&] { (void)launch_stats_table(launch_stats(index), index); });
  view([&] { (void)kernel_sequences_table(kernel_sequences(index, "ProfilerStep", 1)); });

  // Pictures: the last step, the first, a window over the middle of the trace, and the first host event's subtree.
  SvgOptions svg;
  svg.width = 400;
  view([&] { (void)trace_svg(index, svg); });
  view([&] { (void)memory_svg(index, svg); });
  svg.step = "0";
  view([&] { (void)trace_svg(index, svg); });
  view([&] { (void)memory_svg(index, svg); });
  svg.step.clear();
  int64_t first = INT64_MAX, end = INT64_MIN;
  for (const Event& e : t.events) first = std::min(first, e.ts_ns), end = std::max(end, e.end_ns());
  if (!t.events.empty()) {
    svg.from_us = static_cast<double>(end - first) / 4e3;
    svg.to_us = static_cast<double>(end - first) / 2e3;
    view([&] { (void)trace_svg(index, svg); });
    svg.from_us.reset();
    svg.to_us.reset();
  }
  if (!index.host_order().empty()) {
    svg.focus = index.event(index.host_order().front()).name;
    view([&] { (void)trace_svg(index, svg); });
    svg.focus += "#2";
    view([&] { (void)trace_svg(index, svg); });
  }

  // The rank views: this trace as ranks 0 and 1 of one run.
  view([&] {
    const std::vector<RankFigures> ranks = {rank_figures(t, 0, "rank0.json"), rank_figures(t, 1, "rank1.json")};
    (void)match_collectives(ranks);
    for (const OutputFormat format : {OutputFormat::Text, OutputFormat::Csv}) (void)ranks_view(ranks, "", format);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ladder;
  Trace t;
  try {
    t = parse_trace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const TraceError&) {
    return 0;
  }
  every_view(t);

  // Parse -> write -> parse: what we read, we must be able to write, and read back the same.
  std::string problem;
  try {
    problem = testing::round_trip_difference(t, parse_trace(trace_to_json(t), "fuzz.json written back"));
  } catch (const TraceError& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "round trip: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
