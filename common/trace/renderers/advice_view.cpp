// See advice_view.h.
#include "trace/renderers/advice_view.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace ladder {

OutputTable table_records(const Table& table) {
  if (!table.rectangular()) throw std::logic_error("table " + table.name + ": columns of different lengths");
  OutputTable out;
  for (const TableColumn& c : table.columns) {
    out.columns.push_back(c.name);
    out.numeric.push_back(c.type != TableColumn::Text);
  }
  for (size_t r = 0; r < table.rows(); ++r) {
    std::vector<std::string> row;
    for (const TableColumn& c : table.columns) {
      if (c.type == TableColumn::Int) {
        row.push_back(std::to_string(c.ints[r]));
      } else if (c.type == TableColumn::Float) {
        row.push_back(std::isfinite(c.floats[r]) ? fmt::format("{}", c.floats[r]) : std::string());
      } else {
        row.push_back(c.texts[r]);
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

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
  if (format != OutputFormat::Text) {
    const OutputTable t = table_records(advice_table(findings));
    return format == OutputFormat::Csv ? to_csv(t) : to_json(t);
  }
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
