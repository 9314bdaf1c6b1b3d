// Correlation ids in our traces start at kCorrelationIdBase (builder.h says why: HolisticTraceAnalysis with pandas 3
// cannot load a trace whose ids all fit in an int8). The offset must keep every id unique and every launch joined to
// the work it launched, so that the flows and the "External id"s come out as without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "profiler/builder.h"
#include "trace/model/index.h"

namespace ladder {
namespace {

constexpr int64_t kPid = 100, kTid = 100;

// A step of 40 launches (ids 1..40, as CUPTI numbers a short program's calls), each under its own op, each with its
// kernel, plus one kernel launched by nobody we saw (id 99) and one memset.
Records step_records(std::vector<Event>& host) {
  Records r;
  host.push_back(Event{});
  host.back().cat = Cat::UserAnnotation;
  host.back().name = "ProfilerStep#2";
  host.back().pid = kPid, host.back().tid = kTid, host.back().ts_ns = 1000, host.back().dur_ns = 1000000;
  host.back().external_id = 1;
  for (uint64_t c = 1; c <= 40; ++c) {
    const uint64_t t = 2000 + c * 10000;
    Event op;
    op.cat = Cat::CpuOp;
    op.name = "op" + std::to_string(c);
    op.pid = kPid, op.tid = kTid, op.ts_ns = static_cast<int64_t>(t), op.dur_ns = 5000;
    op.external_id = 100 + static_cast<int64_t>(c);
    host.push_back(op);
    ApiRecord a;
    a.name = "cudaLaunchKernel_v7000";
    a.cbid = 211;
    a.pid = kPid, a.tid = kTid, a.start_ns = t + 100, a.end_ns = t + 4000, a.correlation = c;
    r.api.push_back(a);
    r.ext.push_back(ExternalRecord{ExternalRecord::Op, op.external_id, c});
    GpuRecord g;
    g.cat = c == 40 ? Cat::GpuMemset : Cat::Kernel;
    g.name = c == 40 ? "Memset (Device)" : "k" + std::to_string(c);
    g.start_ns = t + 6000, g.end_ns = t + 9000, g.correlation = c;
    g.args.stream = 7;
    r.gpu.push_back(g);
  }
  GpuRecord orphan;
  orphan.name = "orphan";
  orphan.start_ns = 900000, orphan.end_ns = 900100, orphan.correlation = 99;
  orphan.args.stream = 7;
  r.gpu.push_back(orphan);
  return r;
}

TEST(CorrelationIds, StartAtTheBaseStayUniqueAndStillJoinLaunchesToTheirWork) {
  std::vector<Event> host;
  const Records recs = step_records(host);
  const BuiltEvents plain = build_events(recs, host, 0, 2000000);
  const BuiltEvents based = build_events(recs, host, 0, 2000000, kCorrelationIdBase);
  ASSERT_EQ(plain.events.size(), based.events.size());

  // The same events, ids shifted by the base and nothing else: names, times, External ids are untouched.
  std::set<int64_t> launch_ids;
  for (size_t i = 0; i < based.events.size(); ++i) {
    const Event &p = plain.events[i], &b = based.events[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(p.name, b.name);
    EXPECT_EQ(p.ts_ns, b.ts_ns);
    EXPECT_EQ(p.external_id, b.external_id);
    if (p.correlation < 0) {
      EXPECT_EQ(b.correlation, -1);  // ranges have none, and get none
      continue;
    }
    EXPECT_EQ(b.correlation, p.correlation + kCorrelationIdBase);
    EXPECT_GT(b.correlation, 32767);  // past int16 too: HTA's column is then int32, which holds any row index
    if (is_api_call(b.cat)) {
      EXPECT_TRUE(launch_ids.insert(b.correlation).second) << "duplicate id";
    }
  }
  EXPECT_EQ(launch_ids.size(), 40u);

  // Each of the 40 launches joins to its kernel (or memset) and that one to its op, as without the base.
  Trace t;
  t.pid = kPid;
  t.events = based.events;
  int joined = 0;
  const TraceIndex index(t);
  for (const Event& e : t.events) {
    if (!is_gpu_activity(e.cat) || e.name == "orphan") continue;
    ASSERT_TRUE(launch_ids.count(e.correlation)) << e.name;
    const int op_i = index.op_of(static_cast<int>(&e - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr) << e.name;
    EXPECT_EQ("k" + op->name.substr(2), e.cat == Cat::Kernel ? e.name : "k40");
    ++joined;
  }
  EXPECT_EQ(joined, 40);

  // The kernel nobody launched keeps its own (shifted) id, and shares it with no launch.
  for (const Event& e : based.events) {
    if (e.name == "orphan") {
      EXPECT_EQ(e.correlation, kCorrelationIdBase + 99);
      EXPECT_FALSE(launch_ids.count(e.correlation));
    }
  }
}

TEST(CorrelationIds, TheDefaultIsCuptisOwnIds) {
  // build_events without a base leaves CUPTI's ids as they are (the builder's other tests rely on it); the profiler
  // is the one that passes kCorrelationIdBase.
  std::vector<Event> host;
  const BuiltEvents b = build_events(step_records(host), host, 0, 2000000);
  int64_t lo = INT64_MAX;
  for (const Event& e : b.events) {
    if (e.correlation >= 0) lo = std::min(lo, e.correlation);
  }
  EXPECT_EQ(lo, 1);
  static_assert(kCorrelationIdBase >= 1000000, "far above int16, as a long-lived process's CUPTI ids are");
}

}  // namespace
}  // namespace ladder
