// Parse -> write -> parse, and the writer's promises on what it is handed: any name (control bytes, quotes,
// backslashes, invalid UTF-8, very long) comes back as valid JSON our reader reads, metadata is checked before it is
// written, and 0 is a time like any other.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/error.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"
#include "trace/model/overlap.h"
#include "trace/model/trace.h"
#include "trace/tests/round_trip.h"

namespace ladder {
namespace {

Event event(Cat cat, std::string name, int64_t ts, int64_t dur) {
  Event e;
  e.cat = cat;
  e.name = std::move(name);
  e.pid = 7;
  e.tid = 8;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}

Event kernel(std::string name, int64_t ts, int64_t dur, int64_t corr) {
  Event e = event(Cat::Kernel, std::move(name), ts, dur);
  e.pid = 0;
  e.tid = e.gpu.stream = 7;
  e.correlation = corr;
  return e;
}

// Every byte that is not part of valid UTF-8 as U+FFFD, the rest as it was.
const std::string kReplacement = "\xEF\xBF\xBD";

TEST(RoundTrip, ArbitraryNamesComeBackAsTheWriterPromises) {
  struct Case {
    std::string name, read_back;
  };
  const std::string long_name(100000, 'x');
  const Case cases[] = {
      {"plain", "plain"},
      {"caf\xe9", "caf" + kReplacement},  // Latin-1: our reader refused the whole file before
      {std::string("nul\0byte", 8), std::string("nul\0byte", 8)},
      {"\x01\x1f\x7f\t\n\r\b\f", "\x01\x1f\x7f\t\n\r\b\f"},
      {"quote \" backslash \\ slash /", "quote \" backslash \\ slash /"},
      {"\\u0041 is not an escape here", "\\u0041 is not an escape here"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},  // valid: kept
      {"\xc3", kReplacement},                                  // a sequence cut short at the end
      {"\xc3(", kReplacement + "("},                           // a bad continuation byte
      {"\xc0\xaf", kReplacement + kReplacement},               // an overlong '/'
      {"\xed\xa0\x80", kReplacement + kReplacement + kReplacement},  // a UTF-16 surrogate written as UTF-8
      {"\xf4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement},  // past U+10FFFF
      {"\xff\xfe", kReplacement + kReplacement},
      {long_name, long_name},
  };
  Trace t;
  t.pid = 7;
  int64_t ts = 1000;
  for (const Case& c : cases) {
    t.events.push_back(event(Cat::CpuOp, c.name, ts, 10));
    ts += 100;
  }
  t.events.push_back(kernel("k\xe9rnel", ts, 10, 1));
  t.devices.push_back(DeviceProps{});
  t.devices[0].name = "GPU \xff";
  t.process_name = "proc\xfe";
  t.name = "trace\x80";

  const std::string text = trace_to_json(t);
  const Trace back = parse_trace(text, "written.json");
  ASSERT_EQ(back.events.size(), t.events.size());
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(back.events[i].name, cases[i].read_back) << "case " << i;
  }
  EXPECT_EQ(back.events.back().name, "k" + kReplacement + "rnel");
  EXPECT_EQ(back.devices[0].name, "GPU " + kReplacement);
  EXPECT_EQ(back.process_name, "proc" + kReplacement);
  EXPECT_EQ(back.name, "trace" + kReplacement);

  // Once valid, the names come back byte for byte: a second round trip changes nothing.
  EXPECT_EQ(testing::round_trip_difference(back, parse_trace(trace_to_json(back), "again.json")), "");
}

TEST(RoundTrip, CommittedTracesComeBackTheSame) {
  for (const char* file : {"traces/reference/h100/03_fused_mlp_graph.json",
                           "common/trace/tests/data/torch_03_simple_mlp_eager.json"}) {
    SCOPED_TRACE(file);
    const Trace t = load_trace(std::string(LADDER_SOURCE_DIR) + "/" + file);
    EXPECT_EQ(testing::round_trip_difference(t, parse_trace(trace_to_json(t), "back.json")), "");
  }
}

// A finite double beyond float's range used to be written as "inf", which no JSON reader reads.
TEST(RoundTrip, HugeBlocksPerSmStayValidJson) {
  Trace t;
  Event k = kernel("k", 1000, 10, 1);
  k.gpu.blocks_per_sm = 1e300;
  k.gpu.warps_per_sm = -1e300;
  t.events.push_back(k);
  const Trace back = parse_trace(trace_to_json(t), "huge.json");
  EXPECT_EQ(back.events[0].gpu.blocks_per_sm, 0);
  EXPECT_EQ(testing::round_trip_difference(t, back), "");
}

TEST(Metadata, ValidValuesAreWrittenAsTheyAre) {
  Trace t;
  t.events.push_back(event(Cat::CpuOp, "op", 1000, 10));
  t.metadata["n"] = "130001";
  t.metadata["s"] = "\"text\"";
  t.metadata["o"] = " {\"k\": [1, 2.5e3, null, true]} ";
  const Trace back = parse_trace(trace_to_json(t), "meta.json");
  EXPECT_EQ(back.metadata.at("n"), "130001");
  EXPECT_EQ(back.metadata.at("s"), "\"text\"");
  EXPECT_EQ(back.metadata.at("o"), "{\"k\":[1,2.5e3,null,true]}");
}

TEST(Metadata, AValueThatIsNotOneJsonValueThrowsNamingItsKey) {
  for (const std::string bad : {"", "1 2", "{\"a\": 1", "text", "\"caf\xe9\"", "1,\n  \"traceEvents\": []", "nan",
                                "[1,]", "\"unterminated"}) {
    SCOPED_TRACE(bad);
    Trace t;
    t.events.push_back(event(Cat::CpuOp, "op", 1000, 10));
    t.metadata["good"] = "1";
    t.metadata["bad_key"] = bad;
    try {
      (void)trace_to_json(t);
      ADD_FAILURE() << "no error";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("\"bad_key\""), std::string::npos) << e.what();
    }
  }
}

// 0 is a time, not "no value": a trace whose first event is at ts 0 gets its window from 0.
TEST(ZeroTime, ReaderWindowStartsAtAFirstEventAtZero) {
  const Trace t = parse_trace(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
                                  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 1}])",
                              "zero.json");
  ASSERT_TRUE(t.window_start_ns.has_value());
  EXPECT_EQ(*t.window_start_ns, 0);
  EXPECT_EQ(t.window_end_ns, 6000);
  EXPECT_FALSE(t.base_time_ns.has_value());  // the file had no baseTimeNanoseconds
}

TEST(ZeroTime, WriterKeepsAWindowAndABaseAtZero) {
  Trace t;
  t.pid = 1;
  t.events.push_back(event(Cat::CpuOp, "a", 0, 1000));
  t.events.push_back(event(Cat::CpuOp, "b", 5000, 1000));
  // No window given: the first event's time stamps the metadata, and that is 0.
  Trace back = parse_trace(trace_to_json(t), "zero.json");
  EXPECT_EQ(back.window_start_ns, 0);
  EXPECT_EQ(back.base_time_ns, 0);
  // A window that starts at 0 is that window, not "unset".
  t.events[0].ts_ns = 2000;
  t.window_start_ns = 0;
  back = parse_trace(trace_to_json(t), "zero.json");
  EXPECT_EQ(back.window_start_ns, 0);
  EXPECT_EQ(back.events[0].ts_ns, 2000);
}

// Ops that wrote the same inputs share one copy (Event::inputs): a 1 GB trace's ops held their own lists in 587 MiB.
// Sharing must not mix up inputs that differ in any list, nor drop what an op wrote.
TEST(Inputs, OpsWithTheSameInputsShareOneCopy) {
  const Trace t = parse_trace(R"([
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1,
     "args": {"Input Dims": [[2, 3], []], "Input type": ["float", "Scalar"], "Input Strides": [[3, 1], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1,
     "args": {"Input Dims": [[2, 3], []], "Input type": ["float", "Scalar"], "Input Strides": [[3, 1], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 4, "dur": 1,
     "args": {"Input Dims": [[2, 3], []], "Input type": ["float", "Scalar"], "Input Strides": [[1, 2], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "d", "pid": 1, "tid": 1, "ts": 6, "dur": 1,
     "args": {"Input Dims": [[2, 3], []], "Input type": ["float", "int"], "Input Strides": [[3, 1], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "e", "pid": 1, "tid": 1, "ts": 8, "dur": 1,
     "args": {"Input Dims": [[2], [3]], "Input type": ["float", "Scalar"], "Input Strides": [[3, 1], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "f", "pid": 1, "tid": 1, "ts": 10, "dur": 1, "args": {}}])",
                              "inputs.json");
  ASSERT_EQ(t.events.size(), 6u);
  const auto& e = t.events;
  EXPECT_EQ(e[0].inputs.get(), e[1].inputs.get());  // the same object
  EXPECT_EQ(e[0].input_dims(), (std::vector<std::vector<int64_t>>{{2, 3}, {}}));
  EXPECT_EQ(e[0].input_types(), (std::vector<std::string>{"float", "Scalar"}));
  EXPECT_EQ(e[0].input_strides(), (std::vector<std::vector<int64_t>>{{3, 1}, {}}));
  EXPECT_EQ(e[2].input_strides(), (std::vector<std::vector<int64_t>>{{1, 2}, {}}));  // strides differ
  EXPECT_EQ(e[3].input_types(), (std::vector<std::string>{"float", "int"}));         // a type differs
  EXPECT_EQ(e[4].input_dims(), (std::vector<std::vector<int64_t>>{{2}, {3}}));       // the same numbers, split apart
  EXPECT_EQ(e[5].inputs, nullptr);  // none written
  EXPECT_TRUE(e[5].input_dims().empty());
}

// 160,000 kernels on one stream, all running at once (timestamps no GPU gives, but a file can hold): assigning rows
// scanned every row per kernel, 3.9 s here; now a heap, and at most kMaxOverlapRows rows.
TEST(OverlapRows, ManyOverlappingKernelsAreFastAndCapped) {
  Trace t;
  const int n = 160000;
  for (int i = 0; i < n; ++i) t.events.push_back(kernel("k", 1000 + i, 1000000000, i));
  const auto start = std::chrono::steady_clock::now();
  const std::map<const Event*, int> rows = overlap_rows(t);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 1.0) << s << " s for " << n << " kernels";
  // The first kMaxOverlapRows kernels each get a row of their own; every later one goes on the last row.
  EXPECT_EQ(rows.size(), static_cast<size_t>(n - 1));  // all but the first, which is on row 0
  for (int i = 1; i < n; ++i) {
    const int want = std::min(i, kMaxOverlapRows - 1);
    ASSERT_EQ(rows.at(&t.events[static_cast<size_t>(i)]), want) << "kernel " << i;
  }
}

// Rows are reused in order, as before the heap: each activity takes the lowest row whose last slice has ended.
TEST(OverlapRows, TheLowestFreeRowIsTaken) {
  Trace t;
  t.events.push_back(kernel("a", 0, 100, 1));   // row 0, until 100
  t.events.push_back(kernel("b", 10, 20, 2));   // row 1, until 30
  t.events.push_back(kernel("c", 20, 100, 3));  // row 2, until 120
  t.events.push_back(kernel("d", 40, 10, 4));   // row 1 has ended: row 1
  t.events.push_back(kernel("e", 100, 5, 5));   // rows 0 and 1 have ended: row 0, until 105
  t.events.push_back(kernel("f", 100, 0, 6));   // all busy (g, longer, came first at 100): row 3, ends at 100
  t.events.push_back(kernel("g", 100, 1, 7));   // row 1, until 101
  t.events.push_back(kernel("h", 100, 0, 8));   // row 3 again: f had no duration
  const std::map<const Event*, int> rows = overlap_rows(t);
  auto row = [&](size_t i) {
    auto it = rows.find(&t.events[i]);
    return it == rows.end() ? 0 : it->second;
  };
  const int want[] = {0, 1, 2, 1, 0, 3, 1, 3};
  for (size_t i = 0; i < std::size(want); ++i) EXPECT_EQ(row(i), want[i]) << t.events[i].name;
}

}  // namespace
}  // namespace ladder
