// See steps_table.h.
#include "trace/renderers/steps_table.h"

#include <fmt/format.h>

#include "trace/analyses/step_frames.h"
#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

std::string regime_table(const TraceIndex& index) { return regime_table(index, OutputFormat::Text); }

std::string regime_table(const TraceIndex& index, OutputFormat format) {
  if (format != OutputFormat::Text) return table_records(steps_frame(index), format);
  std::string out = "Per step: is the GPU waiting for the CPU, or the CPU for the GPU?\n";
  if (index.whole_trace()) out += "(no ProfilerStep in this trace: one window over the whole trace)\n";
  out += fmt::format("  {:<16} {:>8} {:>11} {:>11} {:>7} {:>12} {:>11}\n", "step", "kernels", "wall", "GPU busy",
                     "busy", "CPU launch", "CPU sync");
  for (const StepStats& s : step_stats(index)) {
    out += fmt::format("  {:<16} {:>8} {:>9.1f}us {:>9.1f}us {:>6.1f}% {:>10.1f}us {:>9.1f}us\n", printable(s.name),
                       s.kernels,
                       s.dur_ns / 1e3, s.gpu_busy_ns / 1e3, s.dur_ns ? 100.0 * s.gpu_busy_ns / s.dur_ns : 0.0,
                       s.launch_ns / 1e3, s.sync_ns / 1e3);
  }
  return out;
}

}  // namespace ladder
