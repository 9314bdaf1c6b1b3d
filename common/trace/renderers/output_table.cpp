// See output_table.h.
#include "trace/renderers/output_table.h"

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

// join_ranks reads back what to_csv and to_json above wrote, so it knows where their rows begin and end:
//  - CSV: a row ends at a newline outside quotes (a cell with a newline in it is quoted, and a quote inside one is
//    doubled, so counting quotes tells inside from outside);
//  - JSON: each row is one line, " {...}" with a "," after all but the last (json_string escapes every newline).
namespace {

std::vector<std::string> csv_records(const std::string& csv) {
  std::vector<std::string> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < csv.size(); ++i) {
    if (csv[i] == '"') {
      quoted = !quoted;
    } else if (csv[i] == '\n' && !quoted) {
      out.push_back(csv.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string> json_rows(const std::string& json) {
  std::vector<std::string> out;
  for (size_t at = json.find("\n {"); at != std::string::npos; at = json.find("\n {", at + 1)) {
    const size_t end = json.find('\n', at + 1);
    std::string row = json.substr(at + 2, end - at - 2);
    if (!row.empty() && row.back() == ',') row.pop_back();
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::string join_ranks(const std::vector<std::pair<int, std::string>>& tables, OutputFormat format) {
  std::string out;
  if (format == OutputFormat::Csv) {
    for (const auto& [rank, csv] : tables) {
      const std::vector<std::string> records = csv_records(csv);
      for (size_t k = 0; k < records.size(); ++k) {
        if (k == 0 && !out.empty()) continue;  // the header once
        out += records[k] + "," + (k == 0 ? std::string("rank") : std::to_string(rank)) + "\n";
      }
    }
    return out;
  }
  for (const auto& [rank, json] : tables) {
    for (const std::string& row : json_rows(json)) {
      const std::string head = row == "{}" ? "{" : row.substr(0, row.size() - 1) + ", ";
      out += (out.empty() ? "[\n " : ",\n ") + fmt::format("{}\"rank\": {}}}", head, rank);
    }
  }
  return out.empty() ? "[]\n" : out + "\n]\n";
}

}  // namespace ladder
