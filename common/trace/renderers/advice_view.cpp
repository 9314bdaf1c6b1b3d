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
    out += fmt::format("    {:<21} {}\n    {:<21} -> {}\n", f.kind, f.detail, "", f.rung);
  }
  return out;
}

}  // namespace ladder
