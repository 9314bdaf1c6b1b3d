// A view's records as columns, for pandas: what `ladder-trace VIEW --json` writes (trace/renderers/output_table.h,
// to_json), read back into one typed vector per column, so that a frame holds the very cells the command's --csv
// prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder::py {

struct Column {
  enum Kind { Int, Float, Text } kind = Int;  // Int: every cell an integer; Float: a number or empty (NaN)
  std::string name;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> texts;
  size_t size() const { return kind == Int ? ints.size() : kind == Float ? floats.size() : texts.size(); }
};

// The columns of a to_json list of flat records, in the order the first record names them. A column is Text when any
// cell is a string, Int when every cell is an integer that fits int64, else Float (null: NaN). An empty list has no
// record to name its columns: `header`, the first line of the same view's to_csv, names them (every column Text).
std::vector<Column> read_records(const std::string& json, const std::string& header_csv = "");

// A column of one value, as long as `rows`: a folder's "rank" column in front of one rank's records.
Column constant_column(const std::string& name, int64_t value, size_t rows);

// Appends b's rows under a's (the same columns, as every rank's table of one view has). A column whose kind differs
// between the two becomes Float (Int and Float) or Text (numbers written as join_ranks writes them).
void append_rows(std::vector<Column>& a, std::vector<Column>&& b);

}  // namespace ladder::py
