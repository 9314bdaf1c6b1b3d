// A typed column table: what an analysis returns when its answer is a table, before any layout. Every column has one
// type (int64, float64 or text) and holds its cells at full precision; the text, CSV and JSON renderers and the Python
// frames all read the same Table, so no number is ever parsed back from printed text.
//
// A float cell with no value is NaN (CSV and JSON print it empty or null, pandas shows NaN). Column names are the
// names a reader knows the quantity by: HTA's where the quantity is HTA's ("sum (us)", "kernel_type", "rank" last),
// torch's table's for the summary ("Self CPU", "# of Calls").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

struct TableColumn {
  enum Type { Int, Float, Text };
  std::string name;
  Type type = Int;
  std::vector<int64_t> ints;       // type Int
  std::vector<double> floats;      // type Float (NaN: no value)
  std::vector<std::string> texts;  // type Text
  size_t size() const { return type == Int ? ints.size() : type == Float ? floats.size() : texts.size(); }
};

struct Table {
  std::string name;  // what the table is ("kernels", "memory_steps", ...): the Python method and the CSV's view
  std::vector<TableColumn> columns;

  // Adds an empty column and returns its index; a second column of the same name is a programming error.
  size_t add(std::string column_name, TableColumn::Type type) {
    for (const TableColumn& c : columns)
      if (c.name == column_name) throw std::logic_error("table " + name + ": two columns named " + column_name);
    columns.push_back(TableColumn{std::move(column_name), type, {}, {}, {}});
    return columns.size() - 1;
  }
  size_t rows() const { return columns.empty() ? 0 : columns.front().size(); }
  const TableColumn* find(const std::string& column_name) const {
    for (const TableColumn& c : columns)
      if (c.name == column_name) return &c;
    return nullptr;
  }
  // Every column as long as the first; a renderer checks this before it prints.
  bool rectangular() const {
    for (const TableColumn& c : columns)
      if (c.size() != rows()) return false;
    return true;
  }
};

}  // namespace ladder
