// See records.h.
#include "trace/output_table.h"

#include <fmt/format.h>

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

}  // namespace

std::string to_csv(const OutputTable& r) {
  std::string out;
  for (size_t c = 0; c < r.columns.size(); ++c) out += (c ? "," : "") + csv_cell(r.columns[c]);
  out += "\n";
  for (const auto& row : r.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_cell(row[c]);
    out += "\n";
  }
  return out;
}

std::string to_json(const OutputTable& r) {
  std::string out = "[";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    out += i ? ",\n {" : "\n {";
    for (size_t c = 0; c < r.columns.size(); ++c) {
      const std::string& v = r.rows[i][c];
      out += (c ? ", " : "") + json_string(r.columns[c]) + ": ";
      out += !r.numeric[c] ? json_string(v) : v.empty() ? "null" : v;
    }
    out += "}";
  }
  return out + (r.rows.empty() ? "]\n" : "\n]\n");
}

}  // namespace ladder
