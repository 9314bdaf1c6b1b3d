// See step_frames.h.
#include "trace/analyses/step_frames.h"

#include <cctype>
#include <cmath>
#include <string>

#include "trace/analyses/breakdown.h"
#include "trace/analyses/steps.h"

namespace ladder {

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

Table steps_frame(const TraceIndex& index) {
  Table t;
  t.name = "steps";
  const size_t step = t.add("step", TableColumn::Text), kernels = t.add("kernels", TableColumn::Int);
  const size_t wall = t.add("wall_us", TableColumn::Float), busy = t.add("gpu_busy_us", TableColumn::Float);
  const size_t pct = t.add("busy_pct", TableColumn::Float), launch = t.add("cpu_launch_us", TableColumn::Float);
  const size_t sync = t.add("cpu_sync_us", TableColumn::Float);
  for (const StepStats& s : step_stats(index)) {
    t.columns[step].texts.push_back(s.name);
    t.columns[kernels].ints.push_back(s.kernels);
    t.columns[wall].floats.push_back(us(s.dur_ns));
    t.columns[busy].floats.push_back(us(s.gpu_busy_ns));
    t.columns[pct].floats.push_back(s.dur_ns ? 100.0 * static_cast<double>(s.gpu_busy_ns) / s.dur_ns : 0.0);
    t.columns[launch].floats.push_back(us(s.launch_ns));
    t.columns[sync].floats.push_back(us(s.sync_ns));
  }
  return t;
}

Table breakdown_frame(const TraceIndex& index, int step) {
  Table t;
  t.name = "breakdown";
  t.add("step", TableColumn::Text);
  t.add("wall_us", TableColumn::Float);
  for (int p = 0; p < kParts; ++p) {
    std::string c = part_name(static_cast<Part>(p));
    for (char& ch : c) ch = ch == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    t.add(c + "_us", TableColumn::Float);
  }
  for (const char* c : {"gpu_busy_us", "gpu_idle_us", "gpu_summed_us", "concurrency"}) t.add(c, TableColumn::Float);
  for (const auto& [name, b] : step_breakdowns(index, step)) {
    size_t c = 0;
    t.columns[c++].texts.push_back(name);
    t.columns[c++].floats.push_back(us(b.wall_ns()));
    for (int p = 0; p < kParts; ++p) t.columns[c++].floats.push_back(us(b.ns[static_cast<size_t>(p)]));
    t.columns[c++].floats.push_back(us(b.gpu_busy_ns));
    t.columns[c++].floats.push_back(us(b.gpu_idle_ns()));
    t.columns[c++].floats.push_back(us(b.gpu_summed_ns));
    t.columns[c++].floats.push_back(b.gpu_busy_ns > 0 ? static_cast<double>(b.gpu_summed_ns) / b.gpu_busy_ns
                                                      : std::nan(""));
  }
  return t;
}

}  // namespace ladder
