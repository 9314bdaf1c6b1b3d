// See records.h. The list is read with the trace reader's own tokenizer (trace/model/json_tokenizer.h).
#include "records.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "trace/model/json_tokenizer.h"

namespace ladder::py {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One cell as to_json wrote it: a number (Int or Float), a string, or null.
struct Cell {
  json::Num::Kind kind = json::Num::None;
  int64_t i = 0;
  double d = kNaN;
  std::string text;
};

// Every value of the column as a double (an empty Text column has none).
void to_float(Column& c) {
  if (c.kind == Column::Int) {
    c.floats.assign(c.ints.begin(), c.ints.end());
    c.ints.clear();
  }
  c.kind = Column::Float;
}

void push_missing(Column& c) {
  if (c.kind == Column::Int) to_float(c);
  if (c.kind == Column::Float) c.floats.push_back(kNaN);
  else c.texts.emplace_back();
}

// The CSV header's names (to_csv quotes a name only when it holds a comma, a quote or a newline).
std::vector<std::string> csv_names(const std::string& csv) {
  std::vector<std::string> names(1);
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char ch = csv[i];
    if (quoted && ch == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
      names.back() += '"';
      ++i;
    } else if (ch == '"') {
      quoted = !quoted;
    } else if (!quoted && ch == ',') {
      names.emplace_back();
    } else if (!quoted && (ch == '\n' || ch == '\r')) {
      break;
    } else {
      names.back() += ch;
    }
  }
  return names.size() == 1 && names[0].empty() ? std::vector<std::string>{} : names;
}

}  // namespace

std::vector<Column> read_records(const std::string& json, const std::string& header_csv) {
  std::vector<std::vector<Cell>> cells;  // per column, in the order the first record names them
  std::vector<std::string> names;
  json::Source src{std::string_view(json)};
  const std::string what = "the view's records";  // the tokenizer keeps a reference to its name
  json::Tokenizer tok(src, what);
  json::Num num;
  size_t rows = 0;
  const bool list = tok.array([&](size_t) {
    size_t col = 0;
    const bool object = tok.object([&](const std::string& key) {
      if (rows == 0) {
        names.push_back(key);
        cells.emplace_back();
      } else if (col >= names.size() || names[col] != key) {
        throw Error("the view's records changed columns at row " + std::to_string(rows) + ": " + key);
      }
      tok.scalar(num);
      Cell c;
      c.kind = num.kind;
      if (num.kind == json::Num::Int) c.i = num.i, c.d = static_cast<double>(num.i);
      if (num.kind == json::Num::Float) c.d = num.d;
      if (num.kind == json::Num::String) c.text = num.text;
      cells[col++].push_back(std::move(c));
    });
    if (!object || col != names.size()) throw Error("the view's records are not flat objects of one shape");
    ++rows;
  });
  if (!list) throw Error("the view's records are not a JSON list");

  std::vector<Column> out;
  if (rows == 0) {
    for (const std::string& n : csv_names(header_csv)) {
      out.emplace_back();
      out.back().name = n;
      out.back().kind = Column::Text;
    }
    return out;
  }
  for (size_t c = 0; c < names.size(); ++c) {
    Column col;
    col.name = names[c];
    bool text = false, all_int = true;
    for (const Cell& x : cells[c]) {
      text = text || x.kind == json::Num::String;
      all_int = all_int && x.kind == json::Num::Int;
    }
    col.kind = text ? Column::Text : all_int ? Column::Int : Column::Float;
    for (Cell& x : cells[c]) {
      if (col.kind == Column::Int) col.ints.push_back(x.i);
      else if (col.kind == Column::Float) col.floats.push_back(x.d);
      else col.texts.push_back(std::move(x.text));  // a null among strings: ""
    }
    out.push_back(std::move(col));
  }
  return out;
}

Column constant_column(const std::string& name, int64_t value, size_t rows) {
  Column c;
  c.name = name;
  c.kind = Column::Int;
  c.ints.assign(rows, value);
  return c;
}

void append_rows(std::vector<Column>& a, std::vector<Column>&& b) {
  const size_t rows_a = a.empty() ? 0 : a.front().size();
  const size_t rows_b = b.empty() ? 0 : b.front().size();
  if (rows_b == 0 && !a.empty()) return;
  if (rows_a == 0) {
    a = std::move(b);
    return;
  }
  for (Column& col : b) {  // a column only b has: missing in a's rows
    bool known = false;
    for (const Column& x : a) known = known || x.name == col.name;
    if (known) continue;
    Column fresh;
    fresh.name = col.name;
    fresh.kind = col.kind == Column::Text ? Column::Text : Column::Float;
    for (size_t r = 0; r < rows_a; ++r) push_missing(fresh);
    a.push_back(std::move(fresh));
  }
  for (Column& x : a) {
    Column* from = nullptr;
    for (Column& col : b) from = col.name == x.name ? &col : from;
    if (!from) {
      for (size_t r = 0; r < rows_b; ++r) push_missing(x);
      continue;
    }
    if (x.kind == Column::Text || from->kind == Column::Text) {
      if (x.kind != from->kind)
        throw Error("column " + x.name + " is text in one rank's table and numbers in another's");
      x.texts.insert(x.texts.end(), std::make_move_iterator(from->texts.begin()),
                     std::make_move_iterator(from->texts.end()));
    } else if (x.kind == Column::Int && from->kind == Column::Int) {
      x.ints.insert(x.ints.end(), from->ints.begin(), from->ints.end());
    } else {
      to_float(x);
      to_float(*from);
      x.floats.insert(x.floats.end(), from->floats.begin(), from->floats.end());
    }
  }
}

}  // namespace ladder::py
