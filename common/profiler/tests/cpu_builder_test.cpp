// The trace builder on synthetic records: each test makes up what CUPTI and our host ranges would have collected in
// one situation the profiler meets on a real GPU, and checks the join. No GPU, no CUPTI.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/builder.h"
#include "trace/analyses/steps.h"
#include "trace/model/index.h"

namespace ladder {
namespace {

constexpr int64_t kPid = 100, kMain = 100, kOther = 107;  // process, main thread, a second thread

// Host ranges as the profiler records them: (name, cat, tid, start, end, External id).
Event range(const std::string& name, Cat cat, int64_t tid, int64_t start, int64_t end, int64_t id) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = kPid;
  e.tid = tid;
  e.ts_ns = start;
  e.dur_ns = end < 0 ? -1 : end - start;
  e.external_id = id;
  return e;
}

ApiRecord api(const std::string& name, bool driver, int64_t tid, uint64_t start, uint64_t end, uint64_t corr) {
  ApiRecord r;
  r.name = name;
  r.driver = driver;
  r.pid = kPid;
  r.tid = tid;
  r.start_ns = start;
  r.end_ns = end;
  r.correlation = corr;
  return r;
}

GpuRecord kernel(const std::string& name, uint64_t start, uint64_t end, uint64_t corr, int stream = 7) {
  GpuRecord g;
  g.cat = Cat::Kernel;
  g.name = name;
  g.start_ns = start;
  g.end_ns = end;
  g.correlation = corr;
  g.args.stream = stream;
  return g;
}

ExternalRecord ext(ExternalRecord::Stack stack, int64_t id, uint64_t corr) {
  ExternalRecord x;
  x.stack = stack;
  x.id = id;
  x.correlation = corr;
  return x;
}

std::vector<const Event*> find(const std::vector<Event>& events, Cat cat, const std::string& name = "") {
  std::vector<const Event*> out;
  for (const Event& e : events) {
    if (e.cat == cat && (name.empty() || e.name == name)) out.push_back(&e);
  }
  return out;
}

// One step of a chapter: ProfilerStep#2 { fwd { op { cudaLaunchKernel } } }, and the kernel it launched.
struct OneStep {
  std::vector<Event> host = {range("ProfilerStep#2", Cat::UserAnnotation, kMain, 1000, 9000, 1),
                             range("fwd", Cat::UserAnnotation, kMain, 1100, 8000, 2),
                             range("mm", Cat::CpuOp, kMain, 1200, 3000, 3)};
  Records recs;
  OneStep() {
    recs.api.push_back(api("cudaLaunchKernel_v7000", false, kMain, 1300, 1900, 41));
    recs.gpu.push_back(kernel("_Z12scale_kernelPfif", 2000, 5000, 41));
    recs.ext = {ext(ExternalRecord::Op, 3, 41), ext(ExternalRecord::UserRange, 2, 41)};
  }
};

TEST(Builder, JoinsKernelToItsLaunchOpAndUserRange) {
  OneStep s;
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  ASSERT_EQ(b.incomplete_records, 0u);
  const auto launches = find(b.events, Cat::CudaRuntime, "cudaLaunchKernel");  // version suffix stripped
  const auto kernels = find(b.events, Cat::Kernel);
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]->name, "scale_kernel(float*, int, float)");  // demangled
  EXPECT_EQ(kernels[0]->external_id, 3);  // the op's id, not the user range's
  EXPECT_EQ(launches[0]->external_id, 3);
  EXPECT_EQ(kernels[0]->correlation, 41);
  EXPECT_EQ(kernels[0]->tid, 7);  // stream
  // The forward's span on the GPU lane covers its kernel, one ns wider each side; the step gets none.
  const auto spans = find(b.events, Cat::GpuUserAnnotation);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]->name, "fwd");
  EXPECT_EQ(spans[0]->ts_ns, 1999);
  EXPECT_EQ(spans[0]->end_ns(), 5001);
  // Time order, parents first at equal starts.
  for (size_t i = 1; i < b.events.size(); ++i) EXPECT_LE(b.events[i - 1].ts_ns, b.events[i].ts_ns);
}

TEST(Builder, DropsLateWarmupRecordsAndRecordsBeforeTheWindow) {
  OneStep s;
  // A warmup step's launch and kernel, whose buffer came back after the window opened at 500.
  s.recs.api.push_back(api("cudaLaunchKernel_v7000", false, kMain, 100, 200, 7));
  s.recs.gpu.push_back(kernel("warmup_kernel", 300, 400, 7));
  s.recs.ext.push_back(ext(ExternalRecord::Op, 3, 7));  // the warmup's ids restarted: same id as a kept op
  // A call that started before the window and ended inside it.
  s.recs.api.push_back(api("cudaMemcpyAsync_v3020", false, kMain, 450, 600, 8));
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  EXPECT_EQ(find(b.events, Cat::Kernel).size(), 1u);
  EXPECT_TRUE(find(b.events, Cat::Kernel, "warmup_kernel").empty());
  EXPECT_EQ(find(b.events, Cat::CudaRuntime).size(), 1u);
}

TEST(Builder, KernelThatRunsInTheNextStepStaysWithTheStepThatLaunchedIt) {
  OneStep s;
  s.host.push_back(range("ProfilerStep#3", Cat::UserAnnotation, kMain, 9100, 20000, 4));
  s.recs.gpu[0].start_ns = 9500;  // queued behind earlier work: it starts after step 2 ended
  s.recs.gpu[0].end_ns = 12000;
  const BuiltEvents b = build_events(s.recs, s.host, 500, 30000);
  Trace t;
  t.events = b.events;
  const TraceIndex index(t);
  ASSERT_EQ(index.steps().size(), 2u);
  const std::vector<StepStats> steps = step_stats(index);
  EXPECT_EQ(steps[0].kernels, 1);
  EXPECT_EQ(steps[1].kernels, 0);
  const auto kernels = find(b.events, Cat::Kernel);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]->external_id, 3);
}

TEST(Builder, KeepsDriverLaunchesOnlyAndLeavesOutBookkeepingCalls) {
  OneStep s;
  s.recs.api.push_back(api("cuLaunchKernelEx", true, kMain, 1400, 1500, 50));
  s.recs.gpu.push_back(kernel("nvjet_sm90_tst_8x64", 5100, 5300, 50));
  s.recs.ext.push_back(ext(ExternalRecord::Op, 3, 50));
  s.recs.api.push_back(api("cuMemAlloc_v2", true, kMain, 1500, 1600, 51));              // driver, not a launch
  s.recs.api.push_back(api("cudaGetLastError_v3020", false, kMain, 1950, 1960, 52));   // Kineto leaves it out
  s.recs.api.push_back(api("__cudaPushCallConfiguration", false, kMain, 1210, 1220, 53));  // launched nothing
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  const auto driver = find(b.events, Cat::CudaDriver);
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(driver[0]->name, "cuLaunchKernelEx");
  EXPECT_EQ(driver[0]->external_id, 3);
  EXPECT_TRUE(find(b.events, Cat::CudaRuntime, "cudaGetLastError").empty());
  EXPECT_TRUE(find(b.events, Cat::CudaRuntime, "__cudaPushCallConfiguration").empty());
  EXPECT_EQ(find(b.events, Cat::Kernel).size(), 2u);
}

TEST(Builder, KernelWithoutALaunchCallIsKept) {
  OneStep s;
  s.recs.gpu.push_back(kernel("orphan", 6000, 6100, 99));  // no API record, no external id
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  const auto orphans = find(b.events, Cat::Kernel, "orphan");
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0]->external_id, -1);
  EXPECT_EQ(orphans[0]->correlation, 99);
}

TEST(Builder, CountsRecordsWithZeroTimestampsInsteadOfDrawingThem) {
  OneStep s;
  s.recs.gpu.push_back(kernel("incomplete", 0, 0, 60));
  s.recs.gpu.push_back(kernel("half", 7000, 0, 61));
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  EXPECT_EQ(b.incomplete_records, 2u);
  EXPECT_EQ(find(b.events, Cat::Kernel).size(), 1u);
}

TEST(Builder, TwoThreadsKeepTheirOwnOpsAndTheStepTakesBoth) {
  OneStep s;
  // A second thread (an autograd-like worker) runs its own op inside the step and launches a kernel.
  s.host.push_back(range("mul", Cat::CpuOp, kOther, 3100, 4000, 5));
  s.recs.api.push_back(api("cudaLaunchKernel_v7000", false, kOther, 3200, 3300, 70));
  s.recs.gpu.push_back(kernel("mul_kernel", 5200, 5400, 70, /*stream=*/14));
  s.recs.ext.push_back(ext(ExternalRecord::Op, 5, 70));
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  const auto launches = find(b.events, Cat::CudaRuntime, "cudaLaunchKernel");
  ASSERT_EQ(launches.size(), 2u);
  for (const Event* l : launches) EXPECT_EQ(l->external_id, l->tid == kOther ? 5 : 3);
  Trace t;
  t.events = b.events;
  const TraceIndex index(t);
  const std::vector<StepStats> steps = step_stats(index);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kernels, 2);  // the other thread's kernel counts for the step too
  const auto muls = find(t.events, Cat::CpuOp, "mul");
  ASSERT_EQ(muls.size(), 1u);
  EXPECT_EQ(index.parent(static_cast<int>(muls[0] - t.events.data())), -1);  // nests on its own thread only
}

TEST(Builder, LeavesOutARangeStillOpenWhenProfilingStopped) {
  OneStep s;
  s.host.push_back(range("never_closed", Cat::UserAnnotation, kMain, 8500, -1, 9));
  const BuiltEvents b = build_events(s.recs, s.host, 500, 10000);
  EXPECT_TRUE(find(b.events, Cat::UserAnnotation, "never_closed").empty());
}

TEST(Builder, StripsApiVersionSuffixesOnly) {
  EXPECT_EQ(strip_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_version("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(strip_version("cuLaunchKernelEx"), "cuLaunchKernelEx");
  EXPECT_EQ(strip_version("cuMemAlloc_v2"), "cuMemAlloc_v2");  // too short to be an API version
}

}  // namespace
}  // namespace ladder
