// advise and the analyses behind it under the hostile-input contract: any trace that reads gives findings with finite
// figures, well-formed CSV and JSON, and ends in time, or one TraceError.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "trace/analyses/advice.h"
#include "trace/analyses/critical_path.h"
#include "trace/analyses/idle_time.h"
#include "trace/analyses/kernel_sequences.h"
#include "trace/analyses/launch_stats.h"
#include "trace/analyses/peaks.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/renderers/advice_view.h"

namespace ladder {
namespace {

Trace trace_of(const std::string& events) {
  return parse_trace(R"({"traceEvents": [)" + events + "]}", "hostile.json");
}

std::string host(const std::string& cat, const std::string& name, int64_t ts, int64_t dur, int64_t tid = 1,
                 int64_t corr = -1) {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         (corr >= 0 ? R"(, "args": {"correlation": )" + std::to_string(corr) + "}" : std::string()) + "}";
}

std::string kernel(const std::string& name, int64_t ts, int64_t dur, int64_t corr, int stream = 7) {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": )" + std::to_string(stream) +
         R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": )" + std::to_string(stream) + R"(, "correlation": )" +
         std::to_string(corr) + "}}";
}

// Every finding finite, the CSV one line a finding, the JSON parses.
void check_findings(const Trace& t) {
  const TraceIndex index(t);
  const auto findings = advise(index, -1, peak_of("NVIDIA H100 80GB HBM3"));
  for (const Finding& f : findings) {
    EXPECT_TRUE(std::isfinite(f.figure)) << f.detail;
    EXPECT_EQ(f.detail.find('\n'), std::string::npos);
  }
  const auto json = nlohmann::json::parse(advice_view(findings, OutputFormat::Json));
  EXPECT_EQ(json.size(), findings.size());
  (void)critical_path_table(critical_path(index), index);
  (void)idle_time_table(idle_time(index), index);
  (void)launch_stats_table(launch_stats(index), index);
  (void)kernel_sequences_table(kernel_sequences(index, "ProfilerStep", 1));
}

TEST(HostileAdvice, AStepOfZeroLengthWithKernelsInIt) {
  check_findings(trace_of(host("user_annotation", "ProfilerStep#1", 100, 0) + "," +
                          host("cuda_runtime", "cudaLaunchKernel", 100, 0, 1, 5) + "," + kernel("k", 100, 0, 5)));
}

TEST(HostileAdvice, AStepThatRanNothingOnTheGpuIsNotLaunchBound) {
  const Trace t = trace_of(host("user_annotation", "ProfilerStep#1", 0, 50) + "," + host("cpu_op", "aten::t", 1, 40));
  EXPECT_TRUE(advise(TraceIndex(t), -1, Peak{}).empty());
}

TEST(HostileAdvice, KernelsBeforeTheirLaunchAndOverlappingOnTheirStream) {
  // The kernel starts before its launch call (clocks disagree) and two kernels of one stream overlap: the critical
  // path still covers the step's work once, from the step's start to the last end.
  const Trace t = trace_of(host("user_annotation", "ProfilerStep#1", 0, 100) + "," +
                           host("cuda_runtime", "cudaLaunchKernel", 50, 10, 1, 1) + "," +
                           host("cuda_runtime", "cudaLaunchKernel", 60, 10, 1, 2) + "," + kernel("a", 20, 50, 1) +
                           "," + kernel("b", 40, 100, 2));
  check_findings(t);
  const TraceIndex index(t);
  int64_t total = 0;
  for (const PathEdge& e : critical_path(index, 0)) {
    EXPECT_GT(e.ns, 0);
    total += e.ns;
  }
  EXPECT_EQ(total, 140000);  // 0 .. b's end at 140 us
}

TEST(HostileAdvice, DeepNestingAndManyKernelsEndInTime) {
  // 20000 ops nested in one another, each launching a kernel, all in one step: every analysis is linear or
  // n log n in them (a depth walked per op, or a kernel looked up on its stream per step, was quadratic).
  std::string events = host("user_annotation", "ProfilerStep#1", 0, 1000000);
  for (int i = 0; i < 20000; ++i) {
    events += "," + host("cpu_op", "aten::x", 1 + i, 900000 - 2 * i);
    events += "," + host("cuda_runtime", "cudaLaunchKernel", 1 + i, 1, 1, 10 + i);
    events += "," + kernel("k", 100000 + 10 * i, 5, 10 + i);
  }
  const Trace t = trace_of(events);
  const auto start = std::chrono::steady_clock::now();
  check_findings(t);
  (void)kernel_sequences(TraceIndex(t), "aten::x", 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
}

TEST(HostileAdvice, NamesWithQuotesAndControlBytesStayOneRecordEach) {
  const std::string name = R"(ev\"il,\n\u0001name)";
  const Trace t = trace_of(host("user_annotation", "ProfilerStep#1", 0, 100) + "," +
                           host("cuda_runtime", "cudaLaunchKernel", 1, 1, 1, 1) + "," + kernel(name, 2, 90, 1));
  const TraceIndex index(t);
  const auto findings = advise(index, -1, Peak{});
  ASSERT_EQ(findings.size(), 1u);  // gpu-bound, naming the kernel
  const auto json = nlohmann::json::parse(advice_view(findings, OutputFormat::Json));
  EXPECT_NE(json.at(0).at("detail").get<std::string>().find("ev"), std::string::npos);
  EXPECT_EQ(advice_view(findings, OutputFormat::Text).find('\x01'), std::string::npos);
}

TEST(HostileAdvice, AStepTheTraceDoesNotHoldIsOneLine) {
  const Trace t = trace_of(host("user_annotation", "ProfilerStep#1", 0, 100));
  EXPECT_THROW((void)advise(TraceIndex(t), 3, Peak{}), UsageError);
}

}  // namespace
}  // namespace ladder
