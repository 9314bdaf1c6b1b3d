// A folder of ranks as CSV or JSON (ladder-trace summary/kernels/breakdown --csv/--json FOLDER): one table with a
// rank column last (as HolisticTraceAnalysis's frames), not one table per rank with lines between them that no CSV or
// JSON reader takes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/output_table.h"

using namespace ladder;

namespace {

const std::string kRanks = std::string(LADDER_TEST_DATA) + "/torch211_user/ranks";

OutputTable table(std::vector<std::vector<std::string>> rows) {
  OutputTable t;
  t.columns = {"name", "us"};
  t.numeric = {false, true};
  t.rows = std::move(rows);
  return t;
}

// Names that CSV has to quote (a comma, a quote, a newline) or JSON has to escape, and an empty number.
const OutputTable kRank0 = table({{"aten::mm", "1.5"}, {"a, \"b\"\nc", ""}});
const OutputTable kRank3 = table({{"{\"x\": [1]},\n {", "2"}});

// What the joined table must be: the rows of every rank behind a rank column, written in one go.
OutputTable expected() {
  OutputTable t;
  t.columns = {"name", "us", "rank"};
  t.numeric = {false, true, true};
  for (const auto& [rank, part] : {std::make_pair(0, kRank0), std::make_pair(3, kRank3)}) {
    for (const auto& row : part.rows) {
      t.rows.push_back(row);
      t.rows.back().push_back(std::to_string(rank));
    }
  }
  return t;
}

}  // namespace

TEST(RankTables, CsvIsOneTableWithARankColumn) {
  EXPECT_EQ(join_ranks({{0, to_csv(kRank0)}, {3, to_csv(kRank3)}}, OutputFormat::Csv), to_csv(expected()));
}

TEST(RankTables, JsonIsOneListWithARankField) {
  EXPECT_EQ(join_ranks({{0, to_json(kRank0)}, {3, to_json(kRank3)}}, OutputFormat::Json), to_json(expected()));
  EXPECT_EQ(join_ranks({{0, to_json(table({}))}}, OutputFormat::Json), "[]\n");  // no rows: still one JSON list
}

// The committed 2-rank gloo run: every rank's summary rows, each once, behind its rank, in one JSON document.
TEST(RankTables, SummaryOfTheCommittedRanks) {
  TableOptions o;
  o.format = OutputFormat::Json;
  std::vector<std::pair<int, std::string>> parts;
  std::vector<nlohmann::json> own;
  const std::vector<RankTrace> ranks = load_ranks(kRanks);
  for (const RankTrace& r : ranks) {
    const TraceIndex index(r.trace);
    parts.emplace_back(r.rank, summary_table(index, o));
    own.push_back(nlohmann::json::parse(parts.back().second));
  }
  ASSERT_EQ(parts.size(), 2u);
  const nlohmann::json all = nlohmann::json::parse(join_ranks(parts, OutputFormat::Json));
  ASSERT_TRUE(all.is_array());
  ASSERT_EQ(all.size(), own[0].size() + own[1].size());
  size_t at = 0;
  for (int rank = 0; rank < 2; ++rank) {
    for (nlohmann::json row : own[static_cast<size_t>(rank)]) {
      row["rank"] = rank;
      EXPECT_EQ(all[at++], row);
    }
  }
  o.format = OutputFormat::Csv;
  const std::string csv = join_ranks({{0, summary_table(TraceIndex(ranks[0].trace), o)}}, OutputFormat::Csv);
  EXPECT_EQ(csv.rfind("Name,Self CPU %,Self CPU,CPU total %,", 0), 0u) << csv.substr(0, 200);
  EXPECT_NE(csv.find(",Total FLOPs,device,rank\n"), std::string::npos) << csv.substr(0, 200);
  EXPECT_EQ(csv.find("=="), std::string::npos);
}
