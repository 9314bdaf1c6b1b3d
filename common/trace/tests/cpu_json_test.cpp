// The trace writer and reader: a hand-built trace goes to JSON and back, and the text is checked the way Perfetto
// will read it (escaping, exact "us.nnn" times, flows inside their slices, strict nesting).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"
#include "trace/model/overlap.h"
#include "trace/model/trace.h"
#include "trace/tests/round_trip.h"
#include "trace/tests/trace_checker.h"

namespace ladder {
namespace {

using nlohmann::json;

// 2026-11-21, 16:31:31.123456789 UTC: an absolute CLOCK_REALTIME time like the ones CUPTI gives.
constexpr int64_t kT0 = 1795277891123456789;
const std::string kKernelName = "void k<\"a\\b\">(float*)";  // quotes and a backslash, as demangled templates have
const std::string kOpName = "my \"op\" \\ with\ttab";

Event host(Cat cat, const std::string& name, int64_t ts, int64_t dur, int64_t ext) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 4242;
  e.tid = 4243;
  e.ts_ns = kT0 + ts;
  e.dur_ns = dur;
  e.external_id = ext;
  return e;
}

Event launch(const std::string& name, int64_t ts, int64_t dur, int64_t ext, int64_t corr, int64_t cbid) {
  Event e = host(Cat::CudaRuntime, name, ts, dur, ext);
  e.correlation = corr;
  e.cbid = cbid;
  return e;
}

Event gpu(Cat cat, const std::string& name, int64_t ts, int64_t dur, int64_t ext, int64_t corr) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 0;
  e.tid = 7;
  e.ts_ns = kT0 + ts;
  e.dur_ns = dur;
  e.external_id = ext;
  e.correlation = corr;
  e.gpu.device = 0;
  e.gpu.context = 1;
  e.gpu.stream = 7;
  return e;
}

Trace sample_trace() {
  Trace t;
  t.pid = 4242;
  t.process_name = "01_matmul_add";
  t.window_start_ns = kT0 - 500;
  t.window_end_ns = kT0 + 200000;
  t.name = "sample.json";
  t.metadata["cupti_version"] = "130001";
  DeviceProps d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.num_sms = 132;
  d.compute_major = 9;
  t.devices.push_back(d);

  t.events.push_back(host(Cat::UserAnnotation, "ProfilerStep#2", 0, 100000, 1));
  t.events.push_back(host(Cat::UserAnnotation, "matmul_add", 1000, 80000, 2));
  Event op = host(Cat::CpuOp, kOpName, 10005, 40000, 3);
  op.set_inputs({{64, 64}, {64, 64}, {}}, {"float", "float", "Scalar"}, {{64, 1}, {1, 64}, {}});
  t.events.push_back(op);
  t.events.push_back(launch("cudaLaunchKernel", 12005, 5000, 3, 77, 211));
  t.events.push_back(launch("cudaMemsetAsync", 18000, 1000, 3, 78, 51));
  t.events.push_back(launch("cudaDeviceSynchronize", 85000, 10000, -1, 79, 165));
  Event k = gpu(Cat::Kernel, kKernelName, 20000, 2560, 3, 77);
  k.gpu.registers_per_thread = 32;
  k.gpu.shared_memory = 1024;
  k.gpu.blocks_per_sm = 128.0 / 132.0;
  k.gpu.warps_per_sm = 128.0 / 132.0 * 4;
  k.gpu.grid[0] = 128, k.gpu.grid[1] = 1, k.gpu.grid[2] = 1;
  k.gpu.block[0] = 128, k.gpu.block[1] = 1, k.gpu.block[2] = 1;
  k.gpu.est_occupancy_pct = 6;
  t.events.push_back(k);
  Event ms = gpu(Cat::GpuMemset, "Memset (Device)", 30000, 736, 3, 78);
  ms.gpu.bytes = 4096;
  t.events.push_back(ms);
  Event ann = gpu(Cat::GpuUserAnnotation, "matmul_add", 19999, 30736 - 19999 + 1, 2, -1);
  t.events.push_back(ann);
  return t;
}

const json* find_x(const json& doc, const std::string& cat, const std::string& name) {
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat && e.value("name", "") == name) return &e;
  }
  return nullptr;
}

TEST(TraceJson, ReparsesAndNamesRoundTrip) {
  const std::string text = trace_to_json(sample_trace());
  json doc;
  ASSERT_NO_THROW(doc = json::parse(text)) << text;
  EXPECT_NE(find_x(doc, "kernel", kKernelName), nullptr) << "kernel name with quotes/backslash did not round-trip";
  EXPECT_NE(find_x(doc, "cpu_op", kOpName), nullptr);
  EXPECT_EQ(doc["traceName"], "sample.json");
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  EXPECT_EQ(doc["schemaVersion"], 1);
  EXPECT_EQ(doc["cupti_version"], 130001);
  EXPECT_EQ(doc["deviceProperties"][0]["numSms"], 132);
  EXPECT_EQ(doc["deviceProperties"][0]["name"], "NVIDIA H100 80GB HBM3");
  // The raw text carries the escapes, not the bare characters.
  EXPECT_NE(text.find(R"x("void k<\"a\\b\">(float*)")x"), std::string::npos);
  EXPECT_NE(text.find(R"x(\ttab")x"), std::string::npos);
}

TEST(TraceJson, ControlCharactersAreEscaped) {
  Trace t = sample_trace();
  const std::string odd = std::string("line\nbreak \x01 bell\x07 end");
  t.events[1].name = odd;
  const std::string text = trace_to_json(t);
  EXPECT_EQ(text.find('\x01'), std::string::npos);
  EXPECT_NE(text.find("\\u0001"), std::string::npos);
  json doc = json::parse(text);
  EXPECT_NE(find_x(doc, "user_annotation", odd), nullptr);
}

TEST(TraceJson, TopLevelKeysInKinetoOrder) {
  const std::string text = trace_to_json(sample_trace());
  const char* keys[] = {"\"schemaVersion\"",       "\"deviceProperties\"", "\"cupti_version\"", "\"displayTimeUnit\"",
                        "\"baseTimeNanoseconds\"", "\"traceEvents\"",      "\"traceName\""};
  size_t last = 0;
  for (const char* k : keys) {
    const size_t pos = text.find(k);
    ASSERT_NE(pos, std::string::npos) << k;
    EXPECT_GT(pos, last) << k << " out of order";
    last = pos;
  }
}

TEST(TraceJson, TimesAreExactMicrosecondsFromABaseOnAWholeSecond) {
  const std::string text = trace_to_json(sample_trace());
  const json doc = json::parse(text);
  // The window start floored to a whole second (not Kineto's 3 months: see the next test).
  EXPECT_EQ(doc["baseTimeNanoseconds"].get<int64_t>(), 1795277891000000000);
  // kT0 - base = 123456789 ns -> "123456.789" us, exactly as text.
  EXPECT_NE(text.find("\"ts\": 123456.789, \"dur\": 100.000"), std::string::npos);
  EXPECT_NE(text.find("\"ts\": 123466.794, \"dur\": 40.000"), std::string::npos);  // op at +10005 ns
  EXPECT_NE(text.find("\"ts\": 123476.789, \"dur\": 2.560"), std::string::npos);   // kernel
  EXPECT_NE(text.find("\"dur\": 0.736"), std::string::npos);                       // memset
  // Metadata events are stamped with the window start, 500 ns before kT0.
  EXPECT_NE(text.find("\"ph\": \"M\", \"ts\": 123456.289"), std::string::npos);
}

TEST(TraceJson, EveryNanosecondSurvivesAReaderThatParsesDoubles) {
  // Perfetto reads "ts" as a double of us and rounds us * 1000 to ns. From Kineto's 3-month base, ts reach 7.9e12 us,
  // where that comes back 1 ns off for some values: two kernels that touch exactly then overlap, and Perfetto drops
  // one (it did on a graph replay of 03_fused_mlp). Relative to a whole second, every ns comes back. Here: 3000
  // consecutive ns around a real kernel start of that replay, 2026-11-22 00:23:04 UTC.
  constexpr int64_t kStart = 1795280584116823607, kKinetoBase = 1790857026000000000;
  Trace t;
  for (int64_t i = 0; i < 3000; ++i) t.events.push_back(gpu(Cat::Kernel, "k" + std::to_string(i), 0, 1, -1, -1));
  for (int64_t i = 0; i < 3000; ++i) t.events[i].ts_ns = kStart + i;
  auto lost = [](const Trace& tr) {
    const json doc = json::parse(trace_to_json(tr));
    const int64_t base = doc["baseTimeNanoseconds"].get<int64_t>();
    int wrong = 0;
    for (const json& e : doc["traceEvents"]) {
      if (e.value("ph", "") != "X") continue;
      const int64_t i = std::stoll(e["name"].get<std::string>().substr(1));
      wrong += base + std::llround(e["ts"].get<double>() * 1000.0) != kStart + i;
    }
    return wrong;
  };
  EXPECT_EQ(lost(t), 0);
  Trace kineto = t;
  kineto.base_time_ns = kKinetoBase;  // what Kineto would write: some ns come back wrong
  EXPECT_GT(lost(kineto), 0);
}

TEST(TraceJson, NegativeTimesClampToZero) {
  Trace t;
  t.base_time_ns = 10000;
  Event e;
  e.cat = Cat::CpuOp;
  e.name = "early";
  e.pid = 1;
  e.tid = 1;
  e.ts_ns = 4000;  // before the base
  e.dur_ns = -5;
  t.events.push_back(e);
  const std::string text = trace_to_json(t);
  EXPECT_NE(text.find("\"ts\": 0.000, \"dur\": 0.000"), std::string::npos) << text;
  EXPECT_TRUE(json::accept(text));
}

TEST(TraceJson, ArgsFollowTorch) {
  const json doc = json::parse(trace_to_json(sample_trace()));
  const json* k = find_x(doc, "kernel", kKernelName);
  ASSERT_NE(k, nullptr);
  const json& a = (*k)["args"];
  EXPECT_EQ(a["External id"], 3);
  EXPECT_EQ(a["correlation"], 77);
  EXPECT_EQ(a["stream"], 7);
  EXPECT_EQ(a["device"], 0);
  EXPECT_EQ(a["registers per thread"], 32);
  EXPECT_EQ(a["shared memory"], 1024);
  EXPECT_NEAR(a["blocks per SM"].get<double>(), 0.969697, 1e-6);
  EXPECT_EQ(a["grid"], json::parse("[128, 1, 1]"));
  EXPECT_EQ(a["est. achieved occupancy %"], 6);
  const json* op = find_x(doc, "cpu_op", kOpName);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ((*op)["args"]["Input Dims"], json::parse("[[64, 64], [64, 64], []]"));
  EXPECT_EQ((*op)["args"]["Input type"], json::parse(R"(["float", "float", "Scalar"])"));
  EXPECT_EQ((*op)["args"]["Input Strides"], json::parse("[[64, 1], [1, 64], []]"));
  const json* sync = find_x(doc, "cuda_runtime", "cudaDeviceSynchronize");
  ASSERT_NE(sync, nullptr);
  EXPECT_FALSE((*sync)["args"].contains("External id")) << "a call outside every op has no External id";
  EXPECT_EQ((*sync)["args"]["cbid"], 165);
  const json* ms = find_x(doc, "gpu_memset", "Memset (Device)");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ((*ms)["args"]["bytes"], 4096);
}

TEST(TraceJson, FlowsSitOnTheirLaunchAndKernel) {
  const std::string text = trace_to_json(sample_trace());
  const json doc = json::parse(text);
  int starts = 0, ends = 0;
  const json& evs = doc["traceEvents"];
  for (size_t i = 0; i < evs.size(); ++i) {
    const json& f = evs[i];
    const std::string ph = f.value("ph", "");
    if (ph != "s" && ph != "f") continue;
    EXPECT_EQ(f["cat"], "ac2g");
    EXPECT_EQ(f["name"], "ac2g");
    // Written right after the slice it belongs to, so the slice precedes it even at equal ts.
    ASSERT_GT(i, 0u);
    const json& x = evs[i - 1];
    EXPECT_EQ(x["ph"], "X");
    EXPECT_EQ(x["args"]["correlation"], f["id"]);
    EXPECT_EQ(x["pid"], f["pid"]);
    EXPECT_EQ(x["tid"], f["tid"]);
    const int64_t fts = testing::json_us_to_ns(f["ts"].get<double>());
    const int64_t xts = testing::json_us_to_ns(x["ts"].get<double>());
    const int64_t xend = xts + testing::json_us_to_ns(x["dur"].get<double>());
    if (ph == "s") {
      ++starts;
      EXPECT_TRUE(x["cat"] == "cuda_runtime" || x["cat"] == "cuda_driver");
      EXPECT_LE(xts, fts);
      EXPECT_LE(fts, xend);
    } else {
      ++ends;
      EXPECT_TRUE(x["cat"] == "kernel" || x["cat"] == "gpu_memset" || x["cat"] == "gpu_memcpy");
      EXPECT_EQ(fts, xts);
      EXPECT_EQ(f["bp"], "e");
    }
  }
  EXPECT_EQ(starts, 2) << "one flow per launched kernel/memset; none for cudaDeviceSynchronize";
  EXPECT_EQ(ends, 2);
  EXPECT_TRUE(testing::check_trace(doc).empty());
}

TEST(TraceJson, MetadataNamesTheLanes) {
  const json doc = json::parse(trace_to_json(sample_trace()));
  auto meta = [&](const std::string& name, int64_t pid, int64_t tid) -> json {
    for (const json& e : doc["traceEvents"]) {
      if (e.value("ph", "") == "M" && e["name"] == name && e["pid"] == pid && e["tid"] == tid) return e["args"];
    }
    return json();
  };
  EXPECT_EQ(meta("process_labels", 4242, 0)["labels"], "CPU");
  EXPECT_EQ(meta("process_name", 4242, 0)["name"], "01_matmul_add");
  EXPECT_EQ(meta("process_sort_index", 4242, 0)["sort_index"], 4242);
  EXPECT_EQ(meta("process_labels", 0, 0)["labels"], "GPU 0");
  EXPECT_EQ(meta("process_sort_index", 0, 0)["sort_index"], 5000000);
  EXPECT_EQ(meta("thread_name", 0, 7)["name"], "stream 7 ");
  EXPECT_EQ(meta("thread_sort_index", 0, 7)["sort_index"], 7);
  EXPECT_EQ(meta("thread_name", 4242, 4243)["name"], "thread 4243 (01_matmul_add)");
}

TEST(TraceJson, CheckerPassesOursAndCatchesBrokenTraces) {
  EXPECT_TRUE(testing::check_trace(json::parse(trace_to_json(sample_trace()))).empty());

  // A slice that starts inside another and ends after it.
  Trace overlap = sample_trace();
  overlap.events[2].dur_ns = 200000;  // the op now outlives its step
  EXPECT_FALSE(testing::check_trace(json::parse(trace_to_json(overlap))).empty());

  // A flow start outside any slice on its lane, and an end that starts no slice.
  json bad = json::parse(trace_to_json(sample_trace()));
  for (json& e : bad["traceEvents"]) {
    if (e.value("ph", "") == "s") e["ts"] = e["ts"].get<double>() + 1e6;
    if (e.value("ph", "") == "f") e["ts"] = e["ts"].get<double>() + 0.001;
  }
  EXPECT_GE(testing::check_trace(bad).size(), 4u);

  // An "s" with no "f".
  json lonely = json::parse(trace_to_json(sample_trace()));
  auto& evs = lonely["traceEvents"];
  for (size_t i = 0; i < evs.size(); ++i) {
    if (evs[i].value("ph", "") == "f") {
      evs.erase(i);
      break;
    }
  }
  EXPECT_FALSE(testing::check_trace(lonely).empty());
  testing::CheckOptions lenient;
  lenient.allow_unpaired_flows = true;
  EXPECT_TRUE(testing::check_trace(lonely, lenient).empty());

  // Two kernels that touch exactly in the text, 4.4e12 us from their base (a graph replay written with Kineto's
  // base): Perfetto reads the first's start 1 ns late, sees it overlap the second, and drops one. So does the checker.
  const json touching = json::parse(R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 4423558116823.607, "dur": 49.953},
      {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 4423558116873.560, "dur": 50.0}]})");
  EXPECT_FALSE(testing::check_trace(touching).empty());
}

// Four kernels on stream 7 as a graph replay on the H100 records them: B starts 32 ns before A ends, C 1 ns before B
// ends (A is over by then), and D lies wholly inside C. `graph` launches all four with one cudaGraphLaunch (one
// correlation id, as CUPTI gives a graph's work), else each has its own cudaLaunchKernel.
Trace overlapping_trace(bool graph) {
  Trace t;
  t.pid = 4242;
  t.process_name = "03_fused_mlp";
  t.window_start_ns = kT0 - 500;
  t.window_end_ns = kT0 + 200000;
  t.events.push_back(host(Cat::UserAnnotation, "ProfilerStep#2", 0, 100000, 1));
  const int64_t starts[] = {20000, 20968, 21999, 22500}, durs[] = {1000, 1032, 1000, 100};
  const char* names[] = {"A_gemm", "B_gelu_mul", "C_gemm", "D_inside"};
  for (int i = 0; i < 4; ++i) {
    const int64_t corr = graph ? 100 : 101 + i;
    if (!graph || i == 0) {
      t.events.push_back(launch(graph ? "cudaGraphLaunch" : "cudaLaunchKernel", 1000 + 100 * i, 50, -1, corr, 211));
    }
    t.events.push_back(gpu(Cat::Kernel, names[i], starts[i], durs[i], -1, corr));
  }
  return t;
}

// A GPU user range drawn around a kernel that starts before the previous one on its stream ends (NCCL's symmetric
// all-reduce, launched early): the range goes to the kernel's overlap row, so it still encloses it and overlaps
// nothing there; a range around kernels of the stream's own row stays on it.
TEST(TraceJson, AGpuRangeFollowsItsKernelToTheOverlapRow) {
  Trace t = overlapping_trace(false);
  Event around_b = gpu(Cat::GpuUserAnnotation, "nccl:all_reduce", 20967, 1034, -1, -1);
  around_b.tid = 7;
  Event around_a = gpu(Cat::GpuUserAnnotation, "mlp_fwd", 19999, 1002, -1, -1);
  around_a.tid = 7;
  t.events.push_back(around_b);
  t.events.push_back(around_a);
  const json doc = json::parse(trace_to_json(t));
  for (const std::string& p : testing::check_trace(doc)) ADD_FAILURE() << p;
  std::map<std::string, int64_t> tid;
  for (const json& e : doc["traceEvents"])
    if (e.value("cat", "") == "gpu_user_annotation") tid[e["name"]] = e["tid"];
  EXPECT_EQ(tid["nccl:all_reduce"], 1000007);
  EXPECT_EQ(tid["mlp_fwd"], 7);
  // Read back, the range is on its stream again (the "stream" arg it was written with), and written again it goes
  // where it went: the same text.
  const Trace back = parse_trace(trace_to_json(t), "back.json");
  EXPECT_EQ(testing::round_trip_difference(t, back), "");
  EXPECT_EQ(trace_to_json(back), trace_to_json(t));
  // Broken the other way (the range left on the stream's row), the strict checker refuses the file.
  json left = doc;
  for (json& e : left["traceEvents"])
    if (e.value("cat", "") == "gpu_user_annotation") e["tid"] = 7;
  EXPECT_FALSE(testing::check_trace(left).empty());
}

std::vector<const json*> kernels_of(const json& doc) {
  std::vector<const json*> out;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel") out.push_back(&e);
  }
  return out;
}

TEST(TraceJson, OverlappingKernelsGoToAnOverlapRowWithTheirTimesAndPassTheStrictChecker) {
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "graph replay" : "eager");
    const Trace t = overlapping_trace(graph);
    const json doc = json::parse(trace_to_json(t));
    for (const std::string& p : testing::check_trace(doc)) ADD_FAILURE() << p;

    // Every kernel is kept, at its own times, with its real stream in args.
    const auto ks = kernels_of(doc);
    ASSERT_EQ(ks.size(), 4u);
    std::map<std::string, const json*> by_name;
    for (const json* k : ks) by_name[(*k)["name"]] = k;
    for (const Event& e : t.events) {
      if (e.cat != Cat::Kernel) continue;
      const json& k = *by_name.at(e.name);
      EXPECT_EQ(testing::json_us_to_ns(k["ts"].get<double>()) + doc["baseTimeNanoseconds"].get<int64_t>(), e.ts_ns);
      EXPECT_EQ(testing::json_us_to_ns(k["dur"].get<double>()), e.dur_ns);
      EXPECT_EQ(k["args"]["stream"], 7);
    }
    // A and C (C starts after A ended) on the stream's row; B and D on overlap rows; D also overlaps B's row.
    EXPECT_EQ((*by_name["A_gemm"])["tid"], 7);
    EXPECT_EQ((*by_name["B_gelu_mul"])["tid"], 1000007);
    EXPECT_EQ((*by_name["C_gemm"])["tid"], 7);
    EXPECT_EQ((*by_name["D_inside"])["tid"], 1000007);
    EXPECT_FALSE((*by_name["A_gemm"])["args"].contains("overlap"));
    const std::string b = (*by_name["B_gelu_mul"])["args"]["overlap"];
    EXPECT_EQ(b.rfind("starts 32 ns before A_gemm on stream 7 ends", 0), 0u) << b;
    EXPECT_EQ(b.find("replayed from a CUDA graph") != std::string::npos, graph) << b;
    EXPECT_EQ((*by_name["C_gemm"])["args"]["overlap"].get<std::string>().rfind("starts 1 ns before B_gelu_mul", 0), 0u);

    // The overlap row is named after its stream and sorts with it.
    int named = 0;
    for (const json& e : doc["traceEvents"]) {
      if (e.value("ph", "") != "M" || e["pid"] != 0 || e["tid"] != 1000007) continue;
      if (e["name"] == "thread_name") {
        EXPECT_EQ(e["args"]["name"], "stream 7 (overlapped)");
        ++named;
      }
      if (e["name"] == "thread_sort_index") {
        EXPECT_EQ(e["args"]["sort_index"], 7);
        ++named;
      }
    }
    EXPECT_EQ(named, 2);

    // The same events all on the stream's row are what Perfetto drops slices of: the strict checker must say so.
    json one_row = doc;
    for (json& e : one_row["traceEvents"]) {
      if (e.value("ph", "") != "M" && e["pid"] == 0) e["tid"] = 7;
    }
    EXPECT_FALSE(testing::check_trace(one_row).empty());
  }
}

TEST(TraceJson, OverlapsAreFoundPerStreamAndNoted) {
  const Trace t = overlapping_trace(true);
  const std::vector<Overlap> found = find_overlaps(t);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].event->name, "B_gelu_mul");
  EXPECT_EQ(found[0].previous->name, "A_gemm");
  EXPECT_EQ(found[0].ns, 32);
  EXPECT_EQ(found[1].ns, 1);
  EXPECT_EQ(found[2].event->name, "D_inside");
  EXPECT_EQ(found[2].ns, 499);  // C ends 499 ns after D starts
  EXPECT_EQ(overlap_note(t),
            "note: 3 of 4 GPU activities start 1 to 499 ns before the previous one on their stream ends (in a graph "
            "replay: CUPTI's timestamps, not concurrency, since the graph orders them); Perfetto shows 2 of them on the "
            "row \"stream 7 (overlapped)\", and 1 on its own row, since what it overlaps was moved away");
  // C overlaps B, which went to the overlap row; on its own row C follows A, which has ended, so C stays there.
  const std::map<const Event*, int> rows = overlap_rows(t);
  int on_overlap_row = 0;
  for (const auto& [e, row] : rows) on_overlap_row += row > 0 ? 1 : 0;
  EXPECT_EQ(on_overlap_row, 2);
  EXPECT_NE(overlap_note(overlapping_trace(false)).find("programmatic dependent launch"), std::string::npos);
  // The same kernels on two streams do not overlap, and a trace without overlaps gets no note.
  Trace two = overlapping_trace(false);
  int i = 0;
  for (Event& e : two.events) {
    if (e.cat == Cat::Kernel) e.gpu.stream = e.tid = (i++ % 2 ? 13 : 7);
  }
  EXPECT_TRUE(find_overlaps(two).empty());  // A, C on stream 7 and B, D on stream 13 each follow one another
  EXPECT_TRUE(overlap_rows(two).empty());
  EXPECT_EQ(overlap_note(sample_trace()), "");
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ladder_trace_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

using TraceFile = TempDir;

TEST_F(TraceFile, SaveThenLoadRoundTripsEvents) {
  const Trace t = sample_trace();
  const std::string path = (dir_ / "trace.json").string();
  save_trace(t, path);
  // Only the trace is left: the temporary file was renamed onto it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "trace.json");
  }
  EXPECT_EQ(files, 1);

  const Trace back = load_trace(path);
  ASSERT_EQ(back.events.size(), t.events.size());
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.process_name, "01_matmul_add");
  EXPECT_EQ(back.base_time_ns, 1795277891000000000);
  EXPECT_EQ(back.window_start_ns, t.window_start_ns);
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].num_sms, 132);
  EXPECT_EQ(back.metadata.at("cupti_version"), "130001");
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event &a = t.events[i], &b = back.events[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.cat, b.cat);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.tid, b.tid);
    EXPECT_EQ(a.ts_ns, b.ts_ns);  // to the nanosecond
    EXPECT_EQ(a.dur_ns, b.dur_ns);
    EXPECT_EQ(a.external_id, b.external_id);
    EXPECT_EQ(a.correlation, b.correlation);
    EXPECT_EQ(a.input_dims(), b.input_dims());
    EXPECT_EQ(a.input_types(), b.input_types());
    EXPECT_EQ(a.input_strides(), b.input_strides());
    if (is_gpu_cat(a.cat) && a.cat != Cat::GpuUserAnnotation) {
      EXPECT_EQ(a.gpu.stream, b.gpu.stream);
      EXPECT_EQ(a.gpu.bytes, b.gpu.bytes);
      EXPECT_EQ(a.gpu.registers_per_thread, b.gpu.registers_per_thread);
      EXPECT_EQ(a.gpu.grid[0], b.gpu.grid[0]);
      EXPECT_EQ(a.gpu.est_occupancy_pct, b.gpu.est_occupancy_pct);
      EXPECT_NEAR(a.gpu.blocks_per_sm, b.gpu.blocks_per_sm, 1e-6);
    }
    if (a.cat == Cat::CudaRuntime) {
      EXPECT_EQ(a.cbid, b.cbid);
    }
  }
  // Writing what was read gives the same text: nothing is lost or reinterpreted on the way.
  EXPECT_EQ(trace_to_json(back), trace_to_json(t));
}

TEST_F(TraceFile, OverlapRowsSurviveARoundTrip) {
  // Read back, an overlapped kernel's tid is its row's; the writer places it by its stream, so the text is the same.
  Trace t = overlapping_trace(true);
  t.name = "overlap.json";
  const std::string path = (dir_ / "overlap.json").string();
  save_trace(t, path);
  const Trace back = load_trace(path);
  EXPECT_EQ(find_overlaps(back).size(), 3u);
  EXPECT_EQ(trace_to_json(back), trace_to_json(t));
}

TEST_F(TraceFile, SaveToUnwritablePathThrowsNamingIt) {
  // A path under a regular file cannot be created, even by root.
  const std::string blocker = (dir_ / "not_a_dir").string();
  std::ofstream(blocker) << "x";
  const std::string path = blocker + "/trace.json";
  try {
    save_trace(sample_trace(), path);
    FAIL() << "save_trace should have thrown";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(TraceFile, LoadReportsMissingAndBrokenFiles) {
  const std::string missing = (dir_ / "missing.json").string();
  try {
    (void)load_trace(missing);
    FAIL() << "load_trace should have thrown";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string broken = (dir_ / "broken.json").string();
  std::ofstream(broken) << "{\"traceEvents\": [ {\"ph\": \"X\", ";
  EXPECT_THROW((void)load_trace(broken), TraceError);
  const std::string other = (dir_ / "other.json").string();
  std::ofstream(other) << "{\"hello\": 1}";
  EXPECT_THROW((void)load_trace(other), TraceError);
}

}  // namespace
}  // namespace ladder
