// See breakdown_view.h.
#include "trace/renderers/breakdown_view.h"

#include <fmt/format.h>

#include "trace/analyses/step_frames.h"
#include "trace/analyses/steps.h"
#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

std::string breakdown_view(const TraceIndex& index, int step, OutputFormat format) {
  if (format != OutputFormat::Text) return table_records(breakdown_frame(index, step), format);
  const std::vector<std::pair<std::string, TimeBreakdown>> rows = step_breakdowns(index, step);
  auto us = [](int64_t ns) { return fmt::format("{:.1f}", ns / 1e3); };
  std::string out =
      "Step time breakdown, us (each moment goes to the first category active: Kernel > Memcpy > Memset > "
      "Communication > Runtime > DataLoader > CPU Exec > Other; the parts add up to the step's wall time)\n";
  out += fmt::format("  {:<18} {:>9}", "step", "wall");
  for (int p = 0; p < kParts; ++p) out += fmt::format(" {:>9}", p == 3 ? "Comm" : part_name(static_cast<Part>(p)));
  out += "\n";
  for (const auto& [name, b] : rows) {
    out += fmt::format("  {:<18} {:>9}", shortened(printable(name), 18), us(b.wall_ns()));
    for (int p = 0; p < kParts; ++p) out += fmt::format(" {:>9}", us(b.ns[p]));
    out += "\n";
  }
  const TimeBreakdown& last = rows.back().second;
  if (last.wall_ns() > 0) {
    out += fmt::format("  {:<18} {:>9}", "  % of wall", "100%");
    for (int p = 0; p < kParts; ++p) out += fmt::format(" {:>8.1f}%", 100.0 * last.ns[p] / last.wall_ns());
    out += "\n";
  }
  out += "\nGPU per step, us (kernels, copies and sets of every stream; summed: their durations added up, so summed / "
         "busy above 1 is work that ran at once on several streams)\n";
  out += fmt::format("  {:<18} {:>9} {:>9} {:>9} {:>9} {:>11}\n", "step", "wall", "busy", "idle", "summed",
                     "summed/busy");
  for (const auto& [name, b] : rows) {
    out += fmt::format("  {:<18} {:>9} {:>9} {:>9} {:>9} {:>11}\n", shortened(printable(name), 18), us(b.wall_ns()),
                       us(b.gpu_busy_ns), us(b.gpu_idle_ns()), us(b.gpu_summed_ns),
                       b.gpu_busy_ns > 0 ? fmt::format("{:.2f}x", double(b.gpu_summed_ns) / b.gpu_busy_ns) : "-");
  }
  return out;
}

}  // namespace ladder
