// See breakdown_view.h.
#include "trace/renderers/breakdown_view.h"

#include <fmt/format.h>

#include <cctype>

#include "trace/analyses/steps.h"
#include "trace/text/text.h"

namespace ladder {

std::string breakdown_view(const TraceIndex& index, int step, OutputFormat format) {
  const std::vector<std::pair<std::string, TimeBreakdown>> rows = step_breakdowns(index, step);
  auto us = [](int64_t ns) { return fmt::format("{:.1f}", ns / 1e3); };
  if (format != OutputFormat::Text) {
    OutputTable rec;
    rec.columns = {"step", "wall_us"};
    for (int p = 0; p < kParts; ++p) {
      std::string c = part_name(static_cast<Part>(p));
      for (char& ch : c) ch = ch == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      rec.columns.push_back(c + "_us");
    }
    for (const char* c : {"gpu_busy_us", "gpu_idle_us", "gpu_summed_us", "concurrency"}) rec.columns.push_back(c);
    rec.numeric.assign(rec.columns.size(), true);
    rec.numeric[0] = false;
    for (const auto& [name, b] : rows) {
      std::vector<std::string> cells = {name, us(b.wall_ns())};
      for (int p = 0; p < kParts; ++p) cells.push_back(us(b.ns[p]));
      cells.push_back(us(b.gpu_busy_ns));
      cells.push_back(us(b.gpu_idle_ns()));
      cells.push_back(us(b.gpu_summed_ns));
      cells.push_back(b.gpu_busy_ns > 0 ? fmt::format("{:.3f}", double(b.gpu_summed_ns) / b.gpu_busy_ns) : "");
      rec.rows.push_back(std::move(cells));
    }
    return format == OutputFormat::Csv ? to_csv(rec) : to_json(rec);
  }
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
