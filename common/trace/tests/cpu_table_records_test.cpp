// trace/renderers/table_records.h: any Table as CSV and JSON records at full precision, and a folder's tables joined.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "trace/renderers/table_records.h"

namespace ladder {
namespace {

Table sample() {
  Table t;
  t.name = "sample";
  const size_t name = t.add("name", TableColumn::Text);
  const size_t calls = t.add("calls", TableColumn::Int);
  const size_t us = t.add("sum (us)", TableColumn::Float);
  t.columns[name].texts = {"a, \"b\"", "line\nbreak", "plain"};
  t.columns[calls].ints = {1, -2, 9007199254740993};
  t.columns[us].floats = {0.1 + 0.2, 3.0, std::numeric_limits<double>::quiet_NaN()};
  return t;
}

TEST(TableRecords, CsvHasEveryDigitAndQuotesWhatNeedsIt) {
  EXPECT_EQ(table_csv(sample()),
            "name,calls,sum (us)\n"
            "\"a, \"\"b\"\"\",1,0.30000000000000004\n"
            "\"line\nbreak\",-2,3.0\n"
            "plain,9007199254740993,\n");
}

TEST(TableRecords, JsonReadsBackToTheSameDoubles) {
  const auto j = nlohmann::json::parse(table_json(sample()));
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["name"], "a, \"b\"");
  EXPECT_EQ(j[0]["sum (us)"].get<double>(), 0.1 + 0.2);
  EXPECT_TRUE(j[1]["sum (us)"].is_number_float());  // 3.0, not the integer 3
  EXPECT_EQ(j[2]["calls"].get<int64_t>(), 9007199254740993);
  EXPECT_TRUE(j[2]["sum (us)"].is_null());
  EXPECT_EQ(j[1]["name"], "line\nbreak");
}

TEST(TableRecords, AnEmptyTableIsItsHeaderOrAnEmptyList) {
  Table t = sample();
  for (TableColumn& c : t.columns) c.ints.clear(), c.floats.clear(), c.texts.clear();
  EXPECT_EQ(table_csv(t), "name,calls,sum (us)\n");
  EXPECT_EQ(table_json(t), "[]\n");
}

TEST(TableRecords, ARaggedTableOrTextFormatIsRefused) {
  Table t = sample();
  t.columns[1].ints.pop_back();
  EXPECT_THROW(table_csv(t), std::logic_error);
  EXPECT_THROW(table_records(sample(), OutputFormat::Text), std::logic_error);
}

TEST(TableRecords, RanksJoinWithRankLast) {
  const Table joined = join_rank_tables({{0, sample()}, {3, sample()}});
  ASSERT_EQ(joined.rows(), 6u);
  ASSERT_EQ(joined.columns.back().name, "rank");
  EXPECT_EQ(joined.columns.back().ints, (std::vector<int64_t>{0, 0, 0, 3, 3, 3}));
  EXPECT_EQ(joined.columns[1].ints[4], -2);
  Table other = sample();
  other.columns[1].name = "count";
  EXPECT_THROW(join_rank_tables({{0, sample()}, {1, other}}), std::logic_error);
}

}  // namespace
}  // namespace ladder
