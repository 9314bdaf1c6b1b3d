// See advice_view.h.
#include "trace/renderers/advice_view.h"

#include <fmt/format.h>

#include "trace/renderers/table_records.h"

namespace ladder {

namespace {

// `text` after `lead`, its words wrapped at kTextWidth columns, the lines after the first indented as far as the
// first's text begins.
constexpr size_t kTextWidth = 118;
std::string wrapped(const std::string& lead, const std::string& text) {
  std::string out = lead, line;
  const std::string indent(lead.size(), ' ');
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && lead.size() + line.size() + 1 + word.size() > kTextWidth) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string advice_view(const std::vector<Finding>& findings, OutputFormat format) {
  if (format != OutputFormat::Text) return table_records(advice_table(findings), format);
  std::string out = "What bounds each step, measured, and the rung of the ladder that teaches the fix\n";
  if (findings.empty())
    return out + "  no finding: no figure of the trace passes its threshold (advice.h lists them)\n";
  std::string step;
  int rank = -2;
  for (const Finding& f : findings) {
    if (f.step_name != step || f.rank != rank) {
      step = f.step_name, rank = f.rank;
      out += f.rank >= 0 ? fmt::format("  {} (rank {})\n", step, f.rank) : fmt::format("  {}\n", step);
    }
    out += wrapped(fmt::format("    {:<21} ", f.kind), f.detail);
    out += wrapped(fmt::format("    {:<21} -> ", ""), f.rung);
  }
  return out;
}

}  // namespace ladder
