// A table as records, for a program rather than a terminal: CSV (RFC 4180) for pandas and spreadsheets, JSON (a list
// of objects) for jq or a CI check. Every table of ladder-trace (summary, steps, diff) can print itself this way.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ladder {

struct OutputTable {
  std::vector<std::string> columns;
  std::vector<bool> numeric;                   // per column: written as a JSON number (else a string)
  std::vector<std::vector<std::string>> rows;  // each as many cells as columns; an empty numeric cell is null
};

std::string to_csv(const OutputTable& r);
std::string to_json(const OutputTable& r);

// One of "text", "csv", "json" (the --csv/--json flags of ladder-trace).
enum class OutputFormat { Text, Csv, Json };

// A folder of ranks as one table for a program: each rank's table, as to_csv or to_json wrote it (`format` says
// which), joined into one with a "rank" column last (as HolisticTraceAnalysis's frames have it): one CSV header, one
// JSON list, so that pandas or jq read every rank at once. The tables must have the same columns.
std::string join_ranks(const std::vector<std::pair<int, std::string>>& tables, OutputFormat format);

}  // namespace ladder
