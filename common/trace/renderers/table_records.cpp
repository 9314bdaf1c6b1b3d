// See table_records.h.
#include "trace/renderers/table_records.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace ladder {

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A JSON string: quotes, backslashes and every control byte escaped (names come from the trace file).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The shortest decimal that reads back to v (fmt's "{}"), with ".0" added to a whole number so it reads as a float;
// empty for NaN and infinities.
std::string float_cell(double v) {
  if (!std::isfinite(v)) return "";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

void check(const Table& t) {
  if (!t.rectangular()) throw std::logic_error("table " + t.name + ": columns of different lengths");
}

}  // namespace

std::string table_csv(const Table& t) {
  check(t);
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_cell(t.columns[c].name);
  out += "\n";
  for (size_t i = 0; i < t.rows(); ++i) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const TableColumn& col = t.columns[c];
      if (c) out += ",";
      out += col.type == TableColumn::Int     ? std::to_string(col.ints[i])
             : col.type == TableColumn::Float ? float_cell(col.floats[i])
                                              : csv_cell(col.texts[i]);
    }
    out += "\n";
  }
  return out;
}

std::string table_json(const Table& t) {
  check(t);
  std::string out = "[";
  for (size_t i = 0; i < t.rows(); ++i) {
    out += i ? ",\n {" : "\n {";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const TableColumn& col = t.columns[c];
      out += (c ? ", " : "") + json_string(col.name) + ": ";
      if (col.type == TableColumn::Int) {
        out += std::to_string(col.ints[i]);
      } else if (col.type == TableColumn::Float) {
        const std::string v = float_cell(col.floats[i]);
        out += v.empty() ? "null" : v;
      } else {
        out += json_string(col.texts[i]);
      }
    }
    out += "}";
  }
  return out + (t.rows() == 0 ? "]\n" : "\n]\n");
}

std::string table_records(const Table& t, OutputFormat format) {
  if (format == OutputFormat::Csv) return table_csv(t);
  if (format == OutputFormat::Json) return table_json(t);
  throw std::logic_error("table " + t.name + ": records are CSV or JSON");
}

Table join_rank_tables(const std::vector<std::pair<int, Table>>& tables) {
  Table out;
  if (tables.empty()) return out;
  out.name = tables.front().second.name;
  for (const TableColumn& c : tables.front().second.columns) out.add(c.name, c.type);
  const size_t rank = out.add("rank", TableColumn::Int);
  for (const auto& [r, t] : tables) {
    check(t);
    if (t.columns.size() + 1 != out.columns.size())
      throw std::logic_error("table " + t.name + ": ranks with different columns");
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const TableColumn& from = t.columns[c];
      TableColumn& to = out.columns[c];
      if (from.name != to.name || from.type != to.type)
        throw std::logic_error("table " + t.name + ": ranks with different columns");
      to.ints.insert(to.ints.end(), from.ints.begin(), from.ints.end());
      to.floats.insert(to.floats.end(), from.floats.begin(), from.floats.end());
      to.texts.insert(to.texts.end(), from.texts.begin(), from.texts.end());
    }
    out.columns[rank].ints.insert(out.columns[rank].ints.end(), t.rows(), r);
  }
  return out;
}

}  // namespace ladder
