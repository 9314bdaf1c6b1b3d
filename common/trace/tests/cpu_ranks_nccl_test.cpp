// `ranks`, the multi-rank picture and the one definition of communication on real NCCL runs: torch 2.11 and NCCL 2.28.9
// on 2 H100s joined by NVLink, recorded by bench/record_torch_ranks.py (tests/data/torch211_nccl/record.log):
//   ddp/  DDP of 3 GeGLU blocks, bf16, 3 bucketed all-reduces per step, ProfilerStep#2 and #3, plain .json
//   tp/   the tensor-parallel GeGLU MLP forward, one all-reduce per step, ProfilerStep#2 to #4, .json.gz
//   async/ DDP of 2 GeGLU blocks (2 bucketed all-reduces on process group "0") and an async_op all-reduce on a second
//         group ("1", its own NCCL stream) per step, no synchronize at a step's end; rank 0 recorded ProfilerStep#1
//         to #3, rank 1 #2 and #3 (different capture windows, as when ranks start their profilers apart), .json.gz
// held against first principles (every rank runs the same collectives in a step; a wait lies within its step), against
// the kernels' start times read by hand from the JSON, and against HolisticTraceAnalysis 0.5.0's get_comm_comp_overlap
// (tests/data/torch211_nccl/hta_figures.json, written by tools/consumers/hta_figures.py --set nccl, HTA run with
// HTA_DISABLE_NS_ROUNDING=1 so its figures are in torch's nanoseconds like ours).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "base/error.h"
#include "trace/analyses/breakdown.h"
#include "trace/analyses/communication.h"
#include "trace/analyses/hta_window.h"
#include "trace/analyses/ranks_lanes.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/ranks_svg.h"
#include "trace/renderers/ranks_timeline.h"
#include "trace/renderers/ranks_view.h"

using namespace ladder;

namespace {

const std::string kData = std::string(LADDER_TEST_DATA) + "/torch211_nccl/";

double us(int64_t ns) { return ns / 1e3; }

const std::string kData4 = std::string(LADDER_TEST_DATA) + "/torch211_nccl4/";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}
const nlohmann::json& hta() {
  static const nlohmann::json doc = read_json(kData + "hta_figures.json");
  return doc;
}
const nlohmann::json& hta4() {
  static const nlohmann::json doc = read_json(kData4 + "hta_figures.json");
  return doc;
}

std::vector<RankFigures> figures(const std::string& run, const std::string& data = kData) {
  return load_rank_figures(data + run, kDefaultMaxJsonBytes);
}

// The view's records as their typed table (ranks_frame), and a cell of it: the row of `step` and `rank`, or -1.
Table frame_of(const std::vector<RankFigures>& ranks) { return ranks_frame(ranks, ranks_table(ranks, "")); }
int row_of(const Table& t, const std::string& step, int rank) {
  for (size_t i = 0; i < t.rows(); ++i) {
    if (t.find("step")->texts[i] == step && t.find("rank")->ints[i] == rank) return static_cast<int>(i);
  }
  return -1;
}
double cell(const Table& t, const std::string& column, int row) {
  const TableColumn* c = t.find(column);
  return c->type == TableColumn::Float ? c->floats[static_cast<size_t>(row)]
                                       : static_cast<double>(c->ints[static_cast<size_t>(row)]);
}

// The picture's lane groups, one per rank: <g class="rank" ...>.
size_t lane_groups(const std::string& svg) {
  size_t groups = 0;
  for (size_t at = svg.find("<g class=\"rank\""); at != std::string::npos; at = svg.find("<g class=\"rank\"", at + 1))
    ++groups;
  return groups;
}

// Per rank, per step name: its collectives and the sum of its waits.
struct PerStep {
  int collectives = 0;
  int64_t wait_ns = 0;
};
std::vector<std::map<std::string, PerStep>> per_step(const std::vector<RankFigures>& ranks, const Matching& m) {
  std::vector<std::map<std::string, PerStep>> out(ranks.size());
  for (const MatchedCollective& c : m.collectives) {
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (c.index[r] < 0) continue;
      const int st = ranks[r].collectives[static_cast<size_t>(c.index[r])].step;
      if (st < 0) continue;
      PerStep& p = out[r][ranks[r].steps[static_cast<size_t>(st)].name];
      ++p.collectives;
      p.wait_ns += c.wait_ns(r);
    }
  }
  return out;
}

}  // namespace

TEST(NcclRanks, TheRecordedRunsAreWhatTheTestsSayTheyAre) {
  for (const char* run : {"ddp", "tp", "async"}) {
    const std::vector<RankTrace> ranks = load_ranks(kData + run);
    ASSERT_EQ(ranks.size(), 2u) << run;
    for (const RankTrace& r : ranks) {
      const bool two = std::string(run) == "async";
      const std::vector<std::string> groups = two ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{"0"};
      EXPECT_EQ(r.trace.process_groups, groups) << run;  // the groups, by their names
      int nccl = 0;
      for (const Event& e : r.trace.events) {
        if (!is_comm_kernel(e)) continue;
        ++nccl;
        // the gradients in bf16; async's group 1 all-reduces a float32 tensor
        const bool f32 = two && e.gpu.stream == 21;
        EXPECT_EQ(e.name.rfind(
                      f32 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0),
                  0u)
            << e.name;
        EXPECT_EQ(e.process_group, two && e.gpu.stream == 21 ? 1 : 0) << e.gpu.stream;  // group 1 on its stream
        EXPECT_EQ(e.seq, -1);  // torch 2.11 records no "Seq": matched by order
      }
      EXPECT_EQ(nccl, std::string(run) == "ddp" ? 6 : std::string(run) == "tp" ? 3 : r.rank == 0 ? 9 : 6) << run;
    }
  }
}

// First principles: every rank runs the same collectives in a step, each is matched on both ranks, and their ends
// agree (an all-reduce ends on every rank once the last one has arrived and the data moved).
TEST(NcclRanks, EveryRankHasTheSameCollectivesPerStep) {
  for (const char* run : {"ddp", "tp"}) {
    SCOPED_TRACE(run);
    const std::vector<RankFigures> ranks = figures(run);
    const Matching m = match_collectives(ranks);
    EXPECT_FALSE(m.by_seq);
    EXPECT_EQ(m.incomplete, 0);
    EXPECT_EQ(m.name_mismatches, 0);
    EXPECT_EQ(m.complete, std::string(run) == "ddp" ? 6 : 3);
    EXPECT_LT(us(m.max_end_spread_ns), 100.0);
    const auto steps = per_step(ranks, m);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].size(), std::string(run) == "ddp" ? 2u : 3u);
    for (const auto& [name, p] : steps[0]) {
      ASSERT_TRUE(steps[1].count(name)) << name;
      EXPECT_EQ(p.collectives, steps[1].at(name).collectives) << name;
      EXPECT_EQ(p.collectives, std::string(run) == "ddp" ? 3 : 1) << name;
    }
  }
}

// No rank waits longer than the step that launched its collectives, and the waits are the ones read by hand from the
// JSON: the NCCL kernels' starts, rank 0 minus rank 1, us, in launch order (a Python loop over the two files):
//   ProfilerStep#2: -20.6, -130.4, -194.6   rank 0 starts first each time: it waits 345.6 us for rank 1
//   ProfilerStep#3: -98.1, +841.8, +424.7   rank 0 waits 98.1 us; then rank 1 waits 841.8 + 424.7 = 1266.5 us
// So the straggler (the rank the others wait for) is rank 1 in ProfilerStep#2 (it has twice the tokens) and rank 0 in
// ProfilerStep#3: rank 0's CPU took 940.9 us longer over that step (6633.6 against 5692.7 us), and its last two
// all-reduces were launched late. The trace says so; a reader should not assume the bigger batch is always last.
TEST(NcclRanks, WaitsLieWithinTheStepAndTheStragglerIsTheOneWaitedFor) {
  // Every run: a rank's waits in a step (their union) within the step's span to the end of its GPU work.
  for (const char* run : {"ddp", "tp", "async"}) {
    const std::vector<RankFigures> ranks = figures(run);
    const Table t = frame_of(ranks);
    for (size_t r = 0; r < ranks.size(); ++r) {
      for (const auto& s : ranks[r].steps) {
        const int row = row_of(t, s.name, ranks[r].rank);
        ASSERT_GE(row, 0) << run << " " << s.name;
        EXPECT_LE(cell(t, "wait_us", row), us(s.work_end_ns - s.ts_ns)) << run << " rank " << r << " " << s.name;
      }
    }
  }
  const std::vector<RankFigures> ranks = figures("ddp");
  const auto steps = per_step(ranks, match_collectives(ranks));
  EXPECT_NEAR(us(steps[0].at("ProfilerStep#2").wait_ns), 345.6, 0.05);
  EXPECT_NEAR(us(steps[1].at("ProfilerStep#2").wait_ns), 0.0, 0.05);
  EXPECT_NEAR(us(steps[0].at("ProfilerStep#3").wait_ns), 98.1, 0.05);
  EXPECT_NEAR(us(steps[1].at("ProfilerStep#3").wait_ns), 1266.5, 0.05);
  // The view's records: wall time, slowest and straggler per step and rank.
  const Table t = frame_of(ranks);
  const std::tuple<const char*, int, double, double, double> want[] = {{"ProfilerStep#2", 0, 5432.6, 0, 0},
                                                                       {"ProfilerStep#2", 1, 5653.4, 1, 1},
                                                                       {"ProfilerStep#3", 0, 6633.6, 1, 1},
                                                                       {"ProfilerStep#3", 1, 5692.7, 0, 0}};
  for (const auto& [step, rank, wall, slowest, straggler] : want) {
    const int row = row_of(t, step, rank);
    ASSERT_GE(row, 0) << step << " " << rank;
    EXPECT_NEAR(cell(t, "wall_us", row), wall, 0.05) << step << " " << rank;
    EXPECT_EQ(cell(t, "slowest", row), slowest) << step << " " << rank;
    EXPECT_EQ(cell(t, "straggler", row), straggler) << step << " " << rank;
  }
  // The CSV prints them at full precision, "rank" last.
  const std::string csv = ranks_view(ranks, "", OutputFormat::Csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "step,wall_us,slowest,straggler,computation_us,overlapping_us,communication_us,other_us,"
            "comp_comm_overlap_pctg,collectives,unmatched,wait_us,arrived_last,caused_wait_us,rank");
  EXPECT_NE(
      csv.find(
          "\nProfilerStep#2,5432.645,0.0,0.0,687.721,62.337,495.462,4187.125,11.175530970833579,3,0,345.626,0,0.0,0\n"),
      std::string::npos)
      << csv;
}

namespace {

// Ours against HTA's comm/comp overlap for every rank of one recorded run, to 0.01 points.
void expect_overlap_as_hta(const std::string& data, const std::string& run, const nlohmann::json& figs) {
  for (const RankTrace& rt : load_ranks(data + run)) {
    SCOPED_TRACE(std::string(run) + " rank " + std::to_string(rt.rank));
    const std::vector<const Event*> kept = hta_kept_activities(rt.trace);
    EXPECT_EQ(static_cast<int>(kept.size()),
              figs["traces"][run]["ns"]["kept"][std::to_string(rt.rank)]["gpu_activities"].get<int>());
    const std::set<const Event*> keep(kept.begin(), kept.end());
    Trace only = rt.trace;
    only.events.clear();
    for (const Event& e : rt.trace.events) {
      if (!is_gpu_activity(e.cat) || keep.count(&e)) only.events.push_back(e);
    }
    const RankFigures f = rank_figures(only, rt.rank, run);
    ASSERT_TRUE(f.comm_kernels);
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const Event* e : kept) first = std::min(first, e->ts_ns), last = std::max(last, e->end_ns());
    const CommCompSplit s = comm_comp_split(f, first, last);
    const double ours = 100.0 * s.overlapping_ns / (s.overlapping_ns + s.communication_ns);
    double theirs = -1;
    for (const auto& row : figs["traces"][run]["ns"]["comm_comp_overlap"]) {
      if (row["rank"] == rt.rank) theirs = row["comp_comm_overlap_pctg"].get<double>();
    }
    EXPECT_NEAR(ours, theirs, 0.01);
  }
}

}  // namespace

// HTA's comm/comp overlap against ours over HTA's set of GPU activities and its span (cpu_hta_oracle_test.cpp says
// why HTA's window differs from a step): to 0.01 points.
TEST(NcclRanks, CommCompOverlapMatchesHta) {
  for (const char* run : {"ddp", "tp", "async"}) expect_overlap_as_hta(kData, run, hta());
  // The figures themselves, as HTA printed them: DDP overlaps some of its all-reduces with the backward's GEMMs; the
  // tensor-parallel forward's one all-reduce waits for the down GEMM's partial sums, so nothing overlaps it.
  EXPECT_EQ(hta()["traces"]["ddp"]["ns"]["comm_comp_overlap"][0]["comp_comm_overlap_pctg"].get<double>(), 11.18);
  EXPECT_EQ(hta()["traces"]["ddp"]["ns"]["comm_comp_overlap"][1]["comp_comm_overlap_pctg"].get<double>(), 24.21);
  EXPECT_EQ(hta()["traces"]["tp"]["ns"]["comm_comp_overlap"][0]["comp_comm_overlap_pctg"].get<double>(), 0.0);
  EXPECT_EQ(hta()["traces"]["async"]["ns"]["comm_comp_overlap"][0]["comp_comm_overlap_pctg"].get<double>(), 4.34);
}

// Two process groups and two capture windows, recorded: each group's collectives matched in its own order; rank 0's
// ProfilerStep#1 (2 all-reduces of group 0, 1 of group 1) is in no other trace: unmatched, and every later one is
// paired with the right one (the ends agree to microseconds, though rank 0's list is 3 longer). Without synchronize
// the GPU runs behind: rank 0's waits in ProfilerStep#3 (5907.5 us) lie partly after its CPU range (5691.2 us).
TEST(NcclRanks, TwoGroupsAndTwoCaptureWindows) {
  const std::vector<RankFigures> ranks = figures("async");
  ASSERT_EQ(ranks[0].collectives.size(), 9u);
  ASSERT_EQ(ranks[1].collectives.size(), 6u);
  const Matching m = match_collectives(ranks);
  EXPECT_EQ(m.complete, 6);
  EXPECT_EQ(m.incomplete, 3);
  EXPECT_EQ(m.name_mismatches, 0);
  EXPECT_LT(us(m.max_end_spread_ns), 100.0);
  std::map<std::string, int> unmatched_groups;
  for (const MatchedCollective& c : m.collectives) {
    if (c.complete) continue;
    ASSERT_GE(c.index[0], 0);
    EXPECT_LT(c.index[1], 0);
    const auto& col = ranks[0].collectives[static_cast<size_t>(c.index[0])];
    EXPECT_EQ(ranks[0].steps[static_cast<size_t>(col.step)].name, "ProfilerStep#1");
    ++unmatched_groups[c.group];
  }
  EXPECT_EQ(unmatched_groups, (std::map<std::string, int>{{"0", 2}, {"1", 1}}));
  const auto steps = per_step(ranks, m);
  EXPECT_NEAR(us(steps[0].at("ProfilerStep#3").wait_ns), 5907.5, 0.05);
  EXPECT_NEAR(us(ranks[0].steps[2].end_ns - ranks[0].steps[2].ts_ns), 5691.2, 0.05);
  EXPECT_NE(ranks_view(ranks, "", OutputFormat::Text)
                .find("unmatched: rank 0 holds 3 collectives that some other rank's trace lacks"),
            std::string::npos);
}

// A rank's trace that begins a collective later than the other's (its capture window opened later): matching by the
// order shifted to agree on the ends still pairs every collective right, and the one only rank 0 holds is unmatched,
// not paired with the wrong one. (Matching by place in the rank's list, as `ranks` did before, pairs every collective
// of rank 1 with the one before it: their ends are a whole bucket apart.)
TEST(NcclRanks, ACollectiveOnlyOneTraceHoldsIsUnmatched) {
  std::vector<RankFigures> ranks = figures("ddp");
  const Matching whole = match_collectives(ranks);
  ranks[1].collectives.erase(ranks[1].collectives.begin());
  const Matching m = match_collectives(ranks);
  EXPECT_EQ(m.complete, 5);
  EXPECT_EQ(m.incomplete, 1);
  EXPECT_EQ(m.max_end_spread_ns, whole.max_end_spread_ns);
  int64_t by_place = 0;
  for (size_t i = 0; i < ranks[1].collectives.size(); ++i)
    by_place = std::max(by_place, std::abs(ranks[0].collectives[i].end_ns - ranks[1].collectives[i].end_ns));
  EXPECT_GT(us(by_place), 1000.0);
  const std::string text = ranks_view(ranks, "", OutputFormat::Text);
  EXPECT_NE(text.find("unmatched: rank 0 holds 1 collective that some other rank's trace lacks"), std::string::npos)
      << text;
}

// Where the trace records a sequence number, it identifies the collective, whatever the times say: numbered as if
// rank 1's trace began one collective later, rank 1's first is rank 0's second, though their ends are far apart.
TEST(NcclRanks, ASeqNumberIdentifiesTheCollective) {
  std::vector<RankFigures> ranks = figures("ddp");
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t i = 0; i < ranks[r].collectives.size(); ++i)
      ranks[r].collectives[i].seq = static_cast<int64_t>(100 + r + i);
  }
  const Matching m = match_collectives(ranks);
  EXPECT_TRUE(m.by_seq);
  EXPECT_EQ(m.complete, 5);                    // 101..105
  EXPECT_EQ(m.incomplete, 2);                  // 100 only in rank 0's trace, 106 only in rank 1's
  EXPECT_GT(us(m.max_end_spread_ns), 1000.0);  // the check that would tell a reader something is off
}

// No NCCL kernel, nothing to overlap: "-" in the text, empty in CSV, null in JSON, as HTA's NaN (the gloo run of
// tests/data/torch211_user).
TEST(NcclRanks, OverlapIsUndefinedWithoutNcclKernels) {
  const std::vector<RankFigures> ranks =
      load_rank_figures(std::string(LADDER_TEST_DATA) + "/torch211_user/ranks", kDefaultMaxJsonBytes);
  for (const RankFigures& r : ranks) EXPECT_FALSE(r.comm_kernels);
  const std::string text = ranks_view(ranks, "", OutputFormat::Text);
  EXPECT_FALSE(std::regex_search(text, std::regex("[0-9]%\n"))) << text;  // no row ends in a percentage
  EXPECT_TRUE(std::regex_search(text, std::regex("ProfilerStep#2 +0 .* -\n"))) << text;
  const Table t = frame_of(ranks);
  ASSERT_EQ(t.rows(), 6u);  // 2 steps and the mean, 2 ranks
  for (size_t i = 0; i < t.rows(); ++i) EXPECT_TRUE(std::isnan(cell(t, "comp_comm_overlap_pctg", static_cast<int>(i))));
  // CSV: an empty cell (the 9th field); JSON: null, and the document parses (pandas reads both as NaN).
  const std::string csv = ranks_view(ranks, "", OutputFormat::Csv);
  size_t rows = 0;
  for (size_t at = csv.find('\n'); at != std::string::npos && at + 1 < csv.size(); at = csv.find('\n', at + 1)) {
    ++rows;
    size_t f = at + 1;
    for (int k = 0; k < 8; ++k) f = csv.find(',', f) + 1;
    EXPECT_EQ(csv.substr(f, 1), ",") << csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
  }
  EXPECT_EQ(rows, 6u);
  const nlohmann::json doc = nlohmann::json::parse(ranks_view(ranks, "", OutputFormat::Json));
  ASSERT_EQ(doc.size(), 6u);
  for (const auto& row : doc) EXPECT_TRUE(row["comp_comm_overlap_pctg"].is_null()) << row.dump();
  for (const char* run : {"ddp", "tp", "async"}) {
    const nlohmann::json d = nlohmann::json::parse(ranks_view(figures(run), "", OutputFormat::Json));
    for (const auto& row : d) EXPECT_TRUE(row["comp_comm_overlap_pctg"].is_number()) << run << " " << row.dump();
  }
}

// One definition: `breakdown` calls communication what communication.h does, and HTA's window does not count it as
// compute (the views used to disagree by the c10d::allreduce_ ops: breakdown counted them, ranks did not).
TEST(NcclRanks, OneDefinitionOfCommunication) {
  int comm = 0;
  for (const std::string& run : {kData + "ddp", std::string(LADDER_TEST_DATA) + "/torch211_user/ranks"}) {
    for (const RankTrace& rt : load_ranks(run)) {
      for (const Event& e : rt.trace.events) {
        EXPECT_EQ(part_of(e) == Part::Communication, is_communication(e)) << e.name;
        if (e.cat == Cat::Kernel) {
          EXPECT_EQ(hta_is_compute(e), !is_comm_kernel(e)) << e.name;
        }
        comm += is_communication(e);
      }
    }
  }
  EXPECT_GT(comm, 0);
}

// Every rank in one picture: a lane group per rank with its GPU streams, the step's three all-reduces joined, the
// straggler named; the terminal's version says the same.
TEST(NcclRanks, OnePictureOfEveryRank) {
  const RanksPicture p = ranks_picture(kData + "ddp", "3", kDefaultMaxJsonBytes);
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.step, "ProfilerStep#3");
  EXPECT_EQ(p.joins.size(), 3u);
  EXPECT_EQ(p.unmatched, 0);
  EXPECT_EQ(p.straggler, 0);
  EXPECT_NEAR(us(p.straggler_caused_ns), 1266.5, 0.05);
  for (const RankLanes& r : p.ranks) {
    int gpu = 0;
    for (const RankLane& l : r.lanes) gpu += l.gpu;
    EXPECT_EQ(gpu, 2);  // the compute stream and NCCL's
  }
  const std::string svg = ranks_svg(p, "ddp");
  EXPECT_EQ(lane_groups(svg), 2u);
  EXPECT_NE(svg.find("straggler: rank 0"), std::string::npos);
  EXPECT_EQ(svg, ranks_svg(ranks_picture(kData + "ddp", "ProfilerStep#3", kDefaultMaxJsonBytes), "ddp"));  // same bytes
  const std::string text = ranks_timeline(p, 120);
  EXPECT_NE(text.find("straggler: rank 0"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1\n"), std::string::npos) << text;
  EXPECT_THROW(ranks_picture(kData + "ddp", "9", kDefaultMaxJsonBytes), TraceError);
}

// Names from a rank's trace reach the picture through xml_text, as in every picture: a C1 control character (CSI,
// U+009B) dropped, bytes that are not UTF-8 written as U+FFFD, a CJK name whole. With its own escaping the picture
// held all three raw, and was not well-formed XML.
TEST(RanksSvg, NamesAreEscapedAsUtf8) {
  RanksPicture p;
  p.step = "step \xc2\x9b\xff";
  p.from_ns = 0;
  p.to_ns = 1000;
  RankLanes r;
  RankLane lane;
  lane.label = "thread \x9b \xe5\x89\x8d\xe5\x90\x91";
  lane.bars.push_back(RankBar{0, 900, RankBar::Compute, 1, "\xe5\x89\x8d\xe5\x90\x91 <k> \xff"});
  r.lanes.push_back(lane);
  p.ranks.push_back(r);
  const std::string svg = ranks_svg(p, "t\xc2\x9b");
  EXPECT_EQ(svg.find("\xc2\x9b"), std::string::npos);
  EXPECT_EQ(svg.find("\xff"), std::string::npos);
  EXPECT_EQ(svg.find("\x9b "), std::string::npos);
  EXPECT_NE(svg.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  EXPECT_NE(svg.find("\xe5\x89\x8d\xe5\x90\x91 &lt;k&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">0.0 us</text>"), std::string::npos);  // the axis of every picture (time_axis_ticks)
}

// Two traces of different runs in one folder: whatever the order matching pairs, their ends are far apart, and the
// view says so instead of printing waits as if they were one run.
TEST(NcclRanks, TracesOfDifferentRunsAreFlagged) {
  std::vector<RankFigures> mixed = {figures("ddp")[0], figures("tp")[1]};
  const Matching m = match_collectives(mixed);
  EXPECT_GT(us(m.max_end_spread_ns), 1000.0);
  const std::string text = ranks_view(mixed, "", OutputFormat::Text);
  EXPECT_NE(text.find("warning: matched collectives end up to"), std::string::npos) << text;
  EXPECT_EQ(ranks_view(figures("ddp"), "", OutputFormat::Text).find("warning:"), std::string::npos);
}

// The same runs on four H100s (tests/data/torch211_nccl4, recorded by bench/record_torch_ranks.py on a 4-GPU machine
// with nothing else running; record.log): every rank holds the same collectives per step, the waits lie within their
// steps, HTA's overlap agrees, and the straggler is the rank the others' NCCL kernels wait for. Read by hand from the
// JSON (each DDP kernel's start minus the last rank's start, us, per collective, ranks 0 / 1 / 2 / 3):
//   ProfilerStep#2: -653.0 / -1054.9 / 0 / -248.3;  -922.1 / -1378.7 / 0 / -335.2;  -2910.7 / -2911.5 / 0 / -2909.8
//   ProfilerStep#3: -2249.1 / -2154.5 / 0 / -1849.9;  -1663.0 / -1667.5 / 0 / -1663.3;  -413.4 / -408.9 / 0 / -407.0
// Rank 2 starts every all-reduce last (its ends agree with the others' within 8.5 us): it is the straggler, not rank
// 3, which has twice the tokens. The steps are host-bound (6.5 to 7.8 ms of CPU around about 1 ms of kernels), and
// rank 2's CPU began both steps last; a bigger batch on the GPU does not show at all.
TEST(NcclRanksFour, EveryRankHasTheSameCollectivesPerStep) {
  for (const char* run : {"ddp", "tp", "async"}) {
    SCOPED_TRACE(run);
    const std::vector<RankFigures> ranks = figures(run, kData4);
    ASSERT_EQ(ranks.size(), 4u);
    const Matching m = match_collectives(ranks);
    EXPECT_FALSE(m.by_seq);
    EXPECT_EQ(m.name_mismatches, 0);
    EXPECT_LT(us(m.max_end_spread_ns), 100.0);
    const std::string r = run;
    EXPECT_EQ(m.complete, r == "ddp" ? 6 : r == "tp" ? 3 : 7);
    EXPECT_EQ(m.incomplete, r == "async" ? 2 : 0);
    const auto steps = per_step(ranks, m);
    for (const char* step : {"ProfilerStep#2", "ProfilerStep#3"}) {
      for (size_t k = 0; k < 4; ++k) {
        ASSERT_TRUE(steps[k].count(step)) << k << " " << step;
        EXPECT_EQ(steps[k].at(step).collectives, r == "tp" ? 1 : 3) << k << " " << step;
      }
    }
  }
}

TEST(NcclRanksFour, WaitsLieWithinTheStepAndTheStragglerIsTheOneWaitedFor) {
  for (const char* run : {"ddp", "tp", "async"}) {
    const std::vector<RankFigures> ranks = figures(run, kData4);
    const auto steps = per_step(ranks, match_collectives(ranks));
    for (size_t r = 0; r < ranks.size(); ++r) {
      for (const auto& st : ranks[r].steps) {
        if (!steps[r].count(st.name)) continue;
        EXPECT_LE(steps[r].at(st.name).wait_ns, st.work_end_ns - st.ts_ns) << run << " rank " << r << " " << st.name;
      }
    }
  }
  const std::vector<RankFigures> ranks = figures("ddp", kData4);
  const auto steps = per_step(ranks, match_collectives(ranks));
  const double by_hand[2][4] = {{653.0 + 922.1 + 2910.7, 1054.9 + 1378.7 + 2911.5, 0, 248.3 + 335.2 + 2909.8},
                                {2249.1 + 1663.0 + 413.4, 2154.5 + 1667.5 + 408.9, 0, 1849.9 + 1663.3 + 407.0}};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(us(steps[k].at("ProfilerStep#2").wait_ns), by_hand[0][k], 0.2) << k;
    EXPECT_NEAR(us(steps[k].at("ProfilerStep#3").wait_ns), by_hand[1][k], 0.2) << k;
  }
  const Table t = frame_of(ranks);
  for (const char* step : {"ProfilerStep#2", "ProfilerStep#3"}) {
    for (int k = 0; k < 4; ++k) {  // straggler: 1 on rank 2's row, 0 on the others
      const int row = row_of(t, step, k);
      ASSERT_GE(row, 0);
      EXPECT_EQ(cell(t, "straggler", row), k == 2 ? 1.0 : 0.0) << step << " rank " << k;
    }
  }
}

// Kernels launched before a rank's capture window carry no args: async's ranks 1 to 3 hold rank 0's ProfilerStep#1
// all-reduce of group "1" (and rank 3 one of group "0") with no process group. Each takes its stream's group, so the
// group-"1" one is matched on all four ranks (rank 0 arrived last: 1367.2 us of waiting in its ProfilerStep#1), and
// none counts in a step of the ranks that did not launch it in the trace.
TEST(NcclRanksFour, AKernelLaunchedBeforeTheWindowTakesItsStreamsGroup) {
  const std::vector<RankFigures> ranks = figures("async", kData4);
  for (size_t r = 1; r < 4; ++r) {
    int no_step = 0;
    for (const auto& c : ranks[r].collectives) {
      EXPECT_FALSE(c.group.empty()) << r;
      no_step += c.step < 0;
    }
    EXPECT_EQ(no_step, r == 3 ? 2 : 1) << r;
  }
  const Matching m = match_collectives(ranks);
  int first_step_group1 = 0;
  for (const MatchedCollective& c : m.collectives) {
    if (!c.complete || c.group != "1") continue;
    const auto& col = ranks[0].collectives[static_cast<size_t>(c.index[0])];
    if (ranks[0].steps[static_cast<size_t>(col.step)].name != "ProfilerStep#1") continue;
    ++first_step_group1;
    EXPECT_EQ(c.last, 0);
  }
  EXPECT_EQ(first_step_group1, 1);
  EXPECT_NE(ranks_view(ranks, "", OutputFormat::Text).find("ProfilerStep#1         0           3          2        "
                                                           "0.0             1             1367.2"),
            std::string::npos);
}

TEST(NcclRanksFour, CommCompOverlapMatchesHta) {
  for (const char* run : {"ddp", "tp", "async"}) expect_overlap_as_hta(kData4, run, hta4());
  EXPECT_EQ(hta4()["traces"]["ddp"]["ns"]["comm_comp_overlap"][2]["comp_comm_overlap_pctg"].get<double>(), 0.0);
}

// One picture of four ranks: a lane group per rank, the step's three all-reduces joined across all four, rank 2 named.
TEST(NcclRanksFour, OnePictureOfEveryRank) {
  const RanksPicture p = ranks_picture(kData4 + "ddp", "3", kDefaultMaxJsonBytes);
  ASSERT_EQ(p.ranks.size(), 4u);
  EXPECT_EQ(p.joins.size(), 3u);
  EXPECT_EQ(p.unmatched, 0);
  EXPECT_EQ(p.straggler, 2);
  const std::string svg = ranks_svg(p, "ddp");
  EXPECT_EQ(lane_groups(svg), 4u);
  EXPECT_NE(svg.find("straggler: rank 2"), std::string::npos);
  EXPECT_NE(ranks_timeline(p, 120).find("straggler: rank 2"), std::string::npos);
}
