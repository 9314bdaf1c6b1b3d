// Our idle time, launch statistics, frequent kernel sequences and critical path against traceinsight 0.6.1's own
// figures for the same traces (tests/data/traceinsight/figures.json, written by tools/consumers/traceinsight_figures.py
// with HTA_DISABLE_NS_ROUNDING=1): every committed single-file trace, two folders of ranks of chapter 07, and torch's
// recordings (torch 2.11's transformer and two-stream traces, the H100 ones of chapters 02, 03 and 06).
//  - idle time: every (rank, stream, category) of theirs equals our whole-trace row within 0.01 us (they round to two
//    decimals), and the ratio within 0.01;
//  - launch statistics: every correlation of theirs is one of our rows marked hta, with the same three durations
//    within 0.001 us; and we have no other hta row among the activities traceinsight keeps;
//  - kernel sequences (operator "ProfilerStep", min_pattern_len 1): every pattern of theirs is one of ours, with the
//    same count and durations within 0.001 us (ours also hold the last step's, which they drop);
//  - critical path: ours is our own definition (critical_path.h); where the two paths take the same route, the GPU
//    parts and the launch overhead are equal within 1 us, and the test counts those steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "trace/analyses/critical_path.h"
#include "trace/analyses/hta_window.h"
#include "trace/analyses/idle_time.h"
#include "trace/analyses/kernel_sequences.h"
#include "trace/analyses/launch_stats.h"
#include "trace/model/index.h"
#include "trace/model/ranks.h"

namespace ladder {
namespace {

using nlohmann::json;

const json& oracle() {
  static const json j = [] {
    std::ifstream in(std::string(LADDER_TEST_DATA) + "/traceinsight/figures.json");
    return json::parse(in);
  }();
  return j;
}

// Each trace of the oracle with its ranks loaded, by the path it names.
template <class F>
void each_rank(F f) {
  for (const auto& [rel, fig] : oracle().at("traces").items()) {
    ASSERT_FALSE(fig.contains("error")) << rel << ": " << fig.dump();
    for (const RankTrace& r : load_ranks_or_file(std::string(LADDER_SOURCE_DIR) + "/" + rel)) {
      SCOPED_TRACE(rel + " rank " + std::to_string(r.rank));
      const TraceIndex index(r.trace);
      f(rel, fig, r, index);
    }
  }
}

TEST(TraceinsightOracle, ReadsTheFigures) {
  EXPECT_EQ(oracle().at("traceinsight_version"), "0.6.1");
  EXPECT_GE(oracle().at("traces").size(), 30u);
}

TEST(TraceinsightOracle, IdleTimeEqualsTheirs) {
  int compared = 0;
  each_rank([&](const std::string&, const json& fig, const RankTrace& r, const TraceIndex& index) {
    std::map<std::pair<int64_t, std::string>, const StreamIdle*> ours;
    const std::vector<StreamIdle> rows = idle_time(index);
    for (const StreamIdle& s : rows) {
      if (s.step != -1) continue;
      for (int c = 0; c < 3; ++c) ours[{s.stream, idle_category_name(static_cast<IdleCategory>(c))}] = &s;
    }
    for (const json& row : fig.at("idle_time")) {
      if (row.at("rank").get<int>() != r.rank) continue;
      const auto key = std::make_pair(row.at("stream").get<int64_t>(), row.at("idle_category").get<std::string>());
      ASSERT_TRUE(ours.count(key)) << row.dump();
      const StreamIdle& s = *ours[key];
      const int c = key.second == "host_wait" ? 0 : key.second == "kernel_wait" ? 1 : 2;
      EXPECT_NEAR(static_cast<double>(s.ns[c]) / 1e3, row.at("idle_time").get<double>(), 0.0051) << row.dump();
      if (s.total_ns() != 0) {
        EXPECT_NEAR(static_cast<double>(s.ns[c]) / static_cast<double>(s.total_ns()),
                    row.at("idle_time_ratio").get<double>(), 0.0051)
            << row.dump();
      }
      ++compared;
    }
  });
  EXPECT_GE(compared, 90);
}

TEST(TraceinsightOracle, LaunchStatisticsEqualTheirs) {
  int compared = 0;
  each_rank([&](const std::string&, const json& fig, const RankTrace& r, const TraceIndex& index) {
    std::map<int64_t, LaunchStat> ours;
    std::set<const Event*> kept;
    for (const Event* e : hta_kept_activities(r.trace)) kept.insert(e);
    int ours_kept = 0;
    for (const LaunchStat& s : launch_stats(index)) {
      if (!s.hta) continue;
      ours[s.correlation] = s;
      ours_kept += kept.count(&index.event(s.activity)) ? 1 : 0;
    }
    const json& theirs = fig.at("launch_stats").at(std::to_string(r.rank));
    for (const json& row : theirs) {
      const auto it = ours.find(row.at("correlation").get<int64_t>());
      ASSERT_NE(it, ours.end()) << row.dump();
      EXPECT_NEAR(static_cast<double>(it->second.cpu_ns) / 1e3, row.at("cpu_duration").get<double>(), 0.001);
      EXPECT_NEAR(static_cast<double>(it->second.gpu_ns) / 1e3, row.at("gpu_duration").get<double>(), 0.001);
      EXPECT_NEAR(static_cast<double>(it->second.delay_ns) / 1e3, row.at("launch_delay").get<double>(), 0.001);
      ++compared;
    }
    EXPECT_EQ(ours_kept, static_cast<int>(theirs.size()));
  });
  EXPECT_GE(compared, 200);
}

TEST(TraceinsightOracle, KernelSequencesEqualTheirs) {
  int compared = 0;
  each_rank([&](const std::string&, const json& fig, const RankTrace& r, const TraceIndex& index) {
    if (r.rank != fig.at("ranks").at(0).get<int>()) return;
    std::map<std::string, KernelSequence> ours;
    for (KernelSequence& s : kernel_sequences(index, "ProfilerStep", 1)) ours[s.pattern()] = s;
    for (const json& row : fig.at("kernel_sequences")) {
      const auto it = ours.find(row.at("pattern").get<std::string>());
      ASSERT_NE(it, ours.end()) << row.dump();
      EXPECT_EQ(it->second.count, row.at("count").get<int>());
      EXPECT_NEAR(static_cast<double>(it->second.gpu_ns) / 1e3, row.at("GPU kernel duration (us)").get<double>(),
                  0.001);
      EXPECT_NEAR(static_cast<double>(it->second.cpu_ns) / 1e3, row.at("CPU op duration (us)").get<double>(), 0.001);
      ++compared;
    }
  });
  EXPECT_GE(compared, 60);
}

// Our critical path is our own (critical_path.h): where both paths run through the same kernels, launches and gaps,
// the GPU parts (compute and communication kernels, the gaps between kernels) and the launch overhead are equal; where
// traceinsight's longest path takes another route (a step whose CPU outlasts its GPU work, a tie between a kernel's
// launch and the kernel before it, torch's backward thread) they differ, and this counts the steps that agree so that
// a change in either shows.
TEST(TraceinsightOracle, CriticalPathGpuPartsEqualTheirsWhereThePathsAgree) {
  int compared = 0, equal = 0;
  each_rank([&](const std::string& rel, const json& fig, const RankTrace& r, const TraceIndex& index) {
    if (r.rank != fig.at("ranks").at(0).get<int>()) return;
    for (const auto& [name, path] : fig.at("critical_path").items()) {
      if (!path.contains("ok") || !path.at("ok").get<bool>()) continue;
      int k = -1;
      for (size_t i = 0; i < index.steps().size(); ++i)
        if (index.steps()[i].name == name) k = static_cast<int>(i);
      ASSERT_GE(k, 0) << name;
      std::map<std::string, double> ours;
      int64_t total = 0;
      for (const PathEdge& e : critical_path(index, k)) {
        ours[e.bound_by] += static_cast<double>(e.ns) / 1e3;
        total += e.ns;
      }
      // Ours runs from the step's start to its last GPU activity's end, or over the whole step without one.
      int64_t end = index.steps()[static_cast<size_t>(k)].end_ns;
      if (!index.gpu_activities(k).empty()) {
        end = 0;
        for (int i : index.gpu_activities(k)) end = std::max(end, index.event(i).end_ns());
      }
      EXPECT_EQ(total, end - index.steps()[static_cast<size_t>(k)].ts_ns) << rel << " " << name;
      const json& theirs = path.at("by");
      auto their = [&](const char* b) { return theirs.contains(b) ? theirs.at(b).get<double>() : 0.0; };
      const bool same = std::abs(ours["gpu_compute_bound"] + ours["gpu_communication_bound"] -
                                 their("gpu_compute_bound") - their("gpu_communication_bound")) <= 1.0 &&
                        std::abs(ours["gpu_kernel_kernel_overhead"] - their("gpu_kernel_kernel_overhead")) <= 1.0;
      if (same && their("gpu_kernel_launch_overhead") > 0) {
        EXPECT_NEAR(ours["gpu_kernel_launch_overhead"], their("gpu_kernel_launch_overhead"), 1.0) << rel << " " << name;
      }
      ++compared;
      equal += same;
    }
  });
  EXPECT_EQ(compared, 62);
  EXPECT_EQ(equal, 32);  // of these committed traces: a change in ours shows here, whichever way it goes
}

}  // namespace
}  // namespace ladder
