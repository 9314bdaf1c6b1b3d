// ladder-trace's `breakdown` and `ranks` figures against HolisticTraceAnalysis 0.5.0's on the same committed torch
// traces. HTA's figures are in tests/data/torch211_user/hta_figures.json, written by tools/consumers/hta_figures.py
// (the file holds the HTA and pandas versions and the command). HTA ran with HTA_DISABLE_NS_ROUNDING=1, so its figures
// are in torch's nanoseconds like ours (by default HTA rounds every event to whole microseconds, start up and end
// down, which moves its totals by up to 2 us per event: the file has those figures too, under "rounded_us").
//
// Tolerance: 0.01 us (10 ns) for times. HTA holds timestamps as float64 microseconds near 4.6e12, whose spacing is
// about 1 ns, and adds them up in float; ours are integer nanoseconds. Overlap percentages: 0.005 points (HTA rounds
// them to two decimals).
//
// The differences of definition, each tested where it has a figure:
//  1. The window. HTA analyses only the GPU work launched before the last ProfilerStep began
//     (trace/analyses/hta_window.h: the rule, read from hta/common/trace.py). Ours: `breakdown` takes each step's CPU
//     range and counts every GPU activity by the time it ran inside it; `ranks` does the same per step. So HTA's
//     whole-trace figures are ours only over HTA's set of activities and HTA's span (first start to last end of that
//     set): tested below with our Timeline (what `breakdown` sums) and our rank figures fed HTA's set. On the
//     two-stream trace HTA keeps 43 of the 72 kernels: the 36 of ProfilerStep#1, and the 7 that ProfilerStep#2 launched
//     in its first 189 us, before its last gpu_user_annotation range began (Kineto draws one per stream, starting with
//     the step's first kernel there). HTA leaves the last step out by default
//     (TraceAnalysis(include_last_profiler_step=False)); the 7 come with the rule.
//  2. Compute. HTA's compute kernels are those not named ^nccl.*Kernel, not Memcpy*/Memset*/dma*, and without
//     "Memcpy" or "Sync" in the name; ours (breakdown's compute, the rank view's computation) are kernels not named
//     nccl*. No kernel of these traces has "Memcpy" or "Sync" in its name (asserted), so the two agree here.
//  3. Idle time per stream. HTA's get_idle_time_breakdown adds up the gaps between consecutive kernels of one stream;
//     ours is the time no stream ran. They agree on a trace with one stream (tested: rank 0 of the gloo run and the
//     03_fused_mlp reference trace); on the two-stream trace HTA's streams have 309.0 and 276.7 us of gaps while the
//     GPU as a whole sat idle 126.6 us of HTA's window.
//  4. Communication on gloo. HTA counts only GPU kernels named ^nccl.*Kernel, so on the gloo run it has no
//     communication and its overlap is 0/0 (null in the file); the Distributed view, and ours, count gloo:* ranges.
//  5. Waits in collectives: HTA 0.5.0 has none for gloo (its straggler analysis looks only at kernels named
//     ncclKernel*), so the rank view's waits are held against figures worked out by hand from the gloo:all_reduce
//     ranges of the trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "trace/analyses/breakdown.h"
#include "trace/analyses/hta_window.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/ranks_view.h"

using namespace ladder;

namespace {

const std::string kData = std::string(LADDER_TEST_DATA) + "/torch211_user/";
constexpr double kUs = 0.01;     // time tolerance, us
constexpr double kPct = 0.005;   // percentage tolerance, points

const nlohmann::json& hta() {
  static const nlohmann::json doc = [] {
    std::ifstream in(kData + "hta_figures.json");
    return nlohmann::json::parse(in);
  }();
  return doc;
}

// HTA's figures for one trace and rank, with rounding off.
const nlohmann::json& temporal(const std::string& trace, int rank) {
  for (const auto& row : hta()["traces"][trace]["ns"]["temporal_breakdown"]) {
    if (row["rank"] == rank) return row;
  }
  throw std::runtime_error("no rank in hta_figures.json");
}

Trace the_one_trace_in(const std::string& folder) {
  for (const auto& e : std::filesystem::directory_iterator(kData + folder)) {
    if (e.path().extension() == ".gz") return load_trace(e.path().string());
  }
  throw std::runtime_error("no trace in " + folder);
}

// The trace with its GPU activities cut down to HTA's set: what HTA's figures are about.
Trace restricted_to_hta(const Trace& t) {
  const std::vector<const Event*> kept = hta_kept_activities(t);
  const std::set<const Event*> keep(kept.begin(), kept.end());
  Trace out = t;
  out.events.clear();
  for (const Event& e : t.events) {
    if (!is_gpu_activity(e.cat) || keep.count(&e)) out.events.push_back(e);
  }
  return out;
}

// The second stream's kernels renamed as NCCL's, as hta_figures.py renamed them for "streams_nccl".
Trace second_stream_as_nccl(Trace t) {
  std::set<int> streams;
  for (const Event& e : t.events) {
    if (e.cat == Cat::Kernel) streams.insert(e.gpu.stream);
  }
  const int second = *std::next(streams.begin());
  EXPECT_EQ(second, hta()["traces"]["streams_nccl"]["renamed_stream"].get<int>());
  for (Event& e : t.events) {
    if (e.cat == Cat::Kernel && e.gpu.stream == second) e.name = hta()["nccl_renamed"].get<std::string>();
  }
  return t;
}

double us(int64_t ns) { return ns / 1e3; }

// Our figures over HTA's set against HTA's, for one trace and rank: hta_window's reproduction, and `breakdown`'s
// Timeline over HTA's span.
void expect_temporal_matches(const Trace& t, const std::string& key, int rank) {
  SCOPED_TRACE(key + " rank " + std::to_string(rank));
  for (const Event& e : t.events) {
    if (e.cat == Cat::Kernel) {
      ASSERT_EQ(e.name.find("Memcpy"), std::string::npos) << "difference 2 would matter: " << e.name;
      ASSERT_EQ(e.name.find("Sync"), std::string::npos) << "difference 2 would matter: " << e.name;
    }
  }
  const nlohmann::json& h = temporal(key, rank);
  const std::vector<const Event*> kept = hta_kept_activities(t);
  EXPECT_EQ(static_cast<int>(kept.size()),
            hta()["traces"][key]["ns"]["kept"][std::to_string(rank)]["gpu_activities"].get<int>());

  const HtaTemporal ours = hta_temporal_breakdown(kept);
  EXPECT_NEAR(us(ours.span_ns), h["kernel_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(ours.idle_ns), h["idle_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(ours.compute_ns), h["compute_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(ours.non_compute_ns), h["non_compute_time(us)"].get<double>(), kUs);

  // `breakdown`'s own arithmetic (Timeline: the union of GPU work, and of the kernels that are not NCCL's) on HTA's
  // set and span gives HTA's figures: idle = span - busy, compute, non-compute = busy - compute.
  const Trace only = restricted_to_hta(t);
  const Timeline line(only);
  const TimeBreakdown b = line.over(line.gpu_first_ns(), line.gpu_last_ns());
  EXPECT_NEAR(us(b.wall_ns()), h["kernel_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(b.gpu_idle_ns()), h["idle_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(b.compute_ns), h["compute_time(us)"].get<double>(), kUs);
  EXPECT_NEAR(us(b.gpu_busy_ns - b.compute_ns), h["non_compute_time(us)"].get<double>(), kUs);
}

// HTA's idle time of one stream (its categories added up).
double hta_stream_idle(const std::string& key, int stream) {
  double total = 0;
  for (const auto& row : hta()["traces"][key]["ns"]["idle_time_breakdown"]) {
    if (row["stream"] == stream) total += row["idle_time"].get<double>();
  }
  return total;
}

}  // namespace

TEST(HtaOracle, FileSaysWhatMadeIt) {
  EXPECT_EQ(hta()["hta_version"], "0.5.0");
  EXPECT_NE(hta()["command"].get<std::string>().find("hta_figures.py"), std::string::npos);
}

TEST(HtaOracle, TemporalBreakdownOfTwoStreams) {
  const Trace t = the_one_trace_in("streams");
  expect_temporal_matches(t, "streams", 0);
  // Difference 1 in numbers: HTA keeps 43 of 72 kernels.
  int kernels = 0;
  for (const Event& e : t.events) kernels += e.cat == Cat::Kernel ? 1 : 0;
  EXPECT_EQ(kernels, 72);
  EXPECT_EQ(hta_kept_activities(t).size(), 43u);
  // Difference 3: per-stream gaps are not the GPU's idle time when two streams run at once.
  EXPECT_NEAR(hta_stream_idle("streams", 13), 309.03, kUs);
  EXPECT_NEAR(hta_stream_idle("streams", 17), 276.74, kUs);
  EXPECT_NEAR(us(hta_temporal_breakdown(hta_kept_activities(t)).idle_ns), 126.60, 0.01);
}

TEST(HtaOracle, TemporalBreakdownOfEachGlooRank) {
  const std::vector<RankTrace> ranks = load_ranks(kData + "ranks");
  ASSERT_EQ(ranks.size(), 2u);
  for (const RankTrace& r : ranks) expect_temporal_matches(r.trace, "ranks", r.rank);
  // Difference 3: with one stream, HTA's idle breakdown adds up to the GPU's idle time (HTA breaks down rank 0 only).
  const HtaTemporal ours = hta_temporal_breakdown(hta_kept_activities(ranks[0].trace));
  EXPECT_NEAR(hta_stream_idle("ranks", 7), us(ours.idle_ns), kUs);
}

TEST(HtaOracle, TemporalBreakdownOfAReferenceTrace) {
  const Trace t = load_trace(std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/03_fused_mlp.json");
  expect_temporal_matches(t, "fused_mlp_h100", 0);
  EXPECT_NEAR(hta_stream_idle("fused_mlp_h100", 7), us(hta_temporal_breakdown(hta_kept_activities(t)).idle_ns), kUs);
}

// HTA's comm/comp overlap (% of communication kernel time that ran beside computation kernels) against the rank
// view's overlapping / (overlapping + communication), over HTA's set and span.
TEST(HtaOracle, CommCompOverlapWithNcclKernels) {
  const Trace t = second_stream_as_nccl(the_one_trace_in("streams"));
  const Trace only = restricted_to_hta(t);
  const RankFigures r = rank_figures(only, 0, "streams_nccl");
  const HtaTemporal span = hta_temporal_breakdown(hta_kept_activities(t));
  int64_t first = INT64_MAX;
  for (const Event* e : hta_kept_activities(t)) first = std::min(first, e->ts_ns);
  const CommCompSplit s = comm_comp_split(r, first, first + span.span_ns);
  const double ours = 100.0 * s.overlapping_ns / (s.overlapping_ns + s.communication_ns);
  const double theirs = hta()["traces"]["streams_nccl"]["ns"]["comm_comp_overlap"][0]["comp_comm_overlap_pctg"];
  EXPECT_NEAR(ours, theirs, kPct);
  EXPECT_NEAR(theirs, 91.07, kPct);
  // And HTA's temporal breakdown now has the NCCL kernels as non-compute, like ours.
  expect_temporal_matches(t, "streams_nccl", 0);
}

TEST(HtaOracle, CommCompOverlapOnGlooIsOnlyOurs) {
  // Difference 4: HTA has no communication on gloo (null: 0/0); ours has the gloo:all_reduce ranges.
  for (const auto& row : hta()["traces"]["ranks"]["ns"]["comm_comp_overlap"]) {
    EXPECT_TRUE(row["comp_comm_overlap_pctg"].is_null());
  }
  const std::vector<RankFigures> ranks = load_rank_figures(kData + "ranks", kDefaultMaxJsonBytes);
  ASSERT_EQ(ranks.size(), 2u);
  for (const RankFigures& r : ranks) {
    EXPECT_EQ(r.collectives.size(), 8u);  // gloo:all_reduce, four per step
    EXPECT_GT(r.communication.length_in(INT64_MIN, INT64_MAX), 0);
  }
}

// The rank view on the gloo run against figures worked out from the trace's JSON alone (a Python script over the
// raw events: the gloo:all_reduce starts matched by order, the unions of the kernels and of the gloo:*/c10d::* ranges
// in the step).
TEST(HtaOracle, RankViewAgainstHandWorkedFigures) {
  const std::vector<RankFigures> ranks = load_rank_figures(kData + "ranks", kDefaultMaxJsonBytes);
  ASSERT_EQ(ranks.size(), 2u);
  const RankFigures& r0 = ranks[0];
  ASSERT_EQ(r0.steps.size(), 2u);
  EXPECT_EQ(r0.steps[0].name, "ProfilerStep#2");
  const CommCompSplit s = comm_comp_split(r0, r0.steps[0].ts_ns, r0.steps[0].end_ns);
  EXPECT_NEAR(us(s.computation_ns + s.overlapping_ns), 177.956, kUs);
  // communication.h's communication on a rank without NCCL kernels: its gloo:all_reduce and c10d::allreduce_ ranges
  EXPECT_NEAR(us(s.communication_ns + s.overlapping_ns), 5805.812, kUs);
  EXPECT_EQ(s.wall_ns, s.computation_ns + s.overlapping_ns + s.communication_ns + s.other_ns);

  // Per step and rank, the waits: rank 1 arrives last at 7 of the 8 collectives.
  double wait[2][2] = {};
  int last_rank1 = 0;
  for (const MatchedCollective& m : match_collectives(ranks).collectives) {
    ASSERT_TRUE(m.complete);
    last_rank1 += m.last == 1;
    for (size_t r = 0; r < 2; ++r) {
      wait[r][ranks[r].collectives[static_cast<size_t>(m.index[r])].step] += us(m.wait_ns(r));
    }
  }
  EXPECT_EQ(last_rank1, 7);
  EXPECT_NEAR(wait[0][0], 946.117, kUs);
  EXPECT_NEAR(wait[0][1], 3975.940, kUs);
  EXPECT_NEAR(wait[1][0], 124.048, kUs);
  EXPECT_NEAR(wait[1][1], 0.0, kUs);

  // The view prints them.
  const std::string csv = ranks_view(ranks, "2", OutputFormat::Csv);
  // step, wall, slowest, straggler, computation, overlapping, communication, other, comm/comp overlap % (empty: no
  // NCCL kernel, as HTA's NaN), collectives, unmatched, waited, arrived last, made others wait, rank
  EXPECT_NE(csv.find("ProfilerStep#2,39692.094,0.0,0.0,177.956,0.0,5805.81,33708.328,,4,0,946.118,1,124.048,0\n"),
            std::string::npos)
      << csv;
  EXPECT_THROW(ranks_view(ranks, "9", OutputFormat::Text), TraceError);
}
