// The profiler on a real GPU: one tiny kernel per step, launched inside an op inside a user range, profiled with
// torch's default schedule (wait 1, warmup 1, active 3). The trace must hold what a torch.profiler trace of the same
// program would: ProfilerStep#2..#4, one kernel per step linked to its op, its launch call inside the op, arrows that
// land, and the user range's span on the GPU lane.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda/check.h"
#include "cuda/tests/require_gpu.h"
#include "profiler/profiler.h"
#include "profiler/tests/tiny_kernels.h"
#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/model/json_write.h"
#include "trace/model/trace.h"
#include "trace/renderers/key_averages.h"
#include "trace/tests/trace_checker.h"

namespace ladder {
namespace {

bool contains(const Event& outer, const Event& inner) {
  return outer.pid == inner.pid && outer.tid == inner.tid && outer.ts_ns <= inner.ts_ns &&
         inner.end_ns() <= outer.end_ns();
}

TEST(Profiler, OneKernelPerStepLinkedToItsOp) {
  SKIP_WITHOUT_GPU();
  const int n = 1 << 16;
  float* x = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
  CUDA_CHECK(cudaMemset(x, 0, n * sizeof(float)));

  const Trace t = profile(Schedule{1, 1, 3}, "tiny_fwd", [&] {
    Range op("tiny_scale", Cat::CpuOp);
    CUDA_CHECK(test_kernels::launch_scale(x, n, 2.0f));
  });
  CUDA_CHECK(cudaFree(x));

  std::vector<const Event*> steps, ops, fwds, kernels, annotations;
  for (const Event& e : t.events) {
    if (e.cat == Cat::UserAnnotation && e.name.rfind("ProfilerStep#", 0) == 0) steps.push_back(&e);
    if (e.cat == Cat::CpuOp && e.name == "tiny_scale") ops.push_back(&e);
    if (e.cat == Cat::UserAnnotation && e.name == "tiny_fwd") fwds.push_back(&e);
    if (e.cat == Cat::Kernel) kernels.push_back(&e);
    if (e.cat == Cat::GpuUserAnnotation) annotations.push_back(&e);
  }
  // Exactly the active steps: the wait step was not traced, the warmup step was thrown away.
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0]->name, "ProfilerStep#2");
  EXPECT_EQ(steps[1]->name, "ProfilerStep#3");
  EXPECT_EQ(steps[2]->name, "ProfilerStep#4");
  ASSERT_EQ(ops.size(), 3u);
  ASSERT_EQ(fwds.size(), 3u);
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(t.devices.size() > 0, true);

  const TraceIndex index(t);
  const auto stats = step_stats(index);
  ASSERT_EQ(stats.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("step " + std::to_string(k + 2));
    EXPECT_EQ(stats[k].kernels, 1);
    ASSERT_EQ(stats[k].gpu_events.size(), 1u);
    const Event& kernel = *stats[k].gpu_events[0];
    EXPECT_NE(kernel.name.find("scale_kernel"), std::string::npos) << kernel.name;  // demangled
    EXPECT_GT(kernel.dur_ns, 0);
    EXPECT_EQ(kernel.gpu.grid[0], (n + 255) / 256);
    EXPECT_EQ(kernel.gpu.block[0], 256);
    EXPECT_GT(kernel.gpu.blocks_per_sm, 0);

    // The kernel carries the External id of the op that launched it.
    const int op_i = index.op_of(static_cast<int>(&kernel - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->name, "tiny_scale");
    EXPECT_EQ(op->external_id, kernel.external_id);
    EXPECT_TRUE(contains(*steps[k], *op));
    EXPECT_TRUE(contains(*fwds[k], *op));

    // Its launch call (same correlation id) ran inside the op, on the op's thread.
    const Event* launch = nullptr;
    for (const Event& e : t.events) {
      if ((e.cat == Cat::CudaRuntime || e.cat == Cat::CudaDriver) && e.correlation == kernel.correlation) launch = &e;
    }
    ASSERT_NE(launch, nullptr);
    EXPECT_NE(launch->name.find("aunch"), std::string::npos) << launch->name;  // cudaLaunchKernel or similar
    EXPECT_EQ(launch->name.find("_v"), std::string::npos) << "version suffix not stripped: " << launch->name;
    EXPECT_TRUE(contains(*op, *launch)) << launch->name;
    EXPECT_EQ(launch->external_id, op->external_id);
    // The GPU ran it after it was launched: CUPTI and our host ranges share one clock.
    EXPECT_GE(kernel.ts_ns, launch->ts_ns);

    // The user range's span on the GPU lane covers the kernel and carries the range's id.
    const Event* span = nullptr;
    for (const Event* a : annotations) {
      if (a->external_id == fwds[k]->external_id) span = a;
    }
    ASSERT_NE(span, nullptr);
    EXPECT_EQ(span->name, "tiny_fwd");
    EXPECT_TRUE(contains(*span, kernel));
    EXPECT_EQ(span->ts_ns, kernel.ts_ns - 1);
    EXPECT_EQ(span->end_ns(), kernel.end_ns() + 1);
  }
  // No span for ProfilerStep#k, as in torch.
  EXPECT_EQ(annotations.size(), 3u);
  // Kineto's blocklist keeps bookkeeping calls out.
  for (const Event& e : t.events) EXPECT_NE(e.name, "cudaGetLastError");

  // The file: valid JSON, strict nesting, every arrow from a launch to its kernel.
  const std::string text = trace_to_json(t);
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(text));
  for (const auto& p : testing::check_trace(doc)) ADD_FAILURE() << p;
  int flow_ends = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "f") continue;
    ++flow_ends;
    bool on_kernel = false;
    for (const auto& x : doc["traceEvents"]) {
      if (x.value("ph", "") == "X" && x.value("cat", "") == "kernel" && x["ts"] == e["ts"] && x["pid"] == e["pid"] &&
          x["tid"] == e["tid"] && x["args"]["correlation"] == e["id"]) {
        on_kernel = true;
      }
    }
    EXPECT_TRUE(on_kernel) << e.dump();
  }
  EXPECT_EQ(flow_ends, 3);

  // And the table reads it: the op's CUDA total is its kernels'.
  const std::string table = summary_table(t);
  EXPECT_NE(table.find("tiny_scale"), std::string::npos) << table;
  EXPECT_NE(table.find("Self CUDA time total"), std::string::npos) << table;
}

// cuBLAS launches some kernels through the driver (cuLaunchKernelEx for the nvjet_* kernels on an H100), others
// through the runtime (cudaLaunchKernelExC). Either way each kernel must keep its launch call and its op.
TEST(Profiler, CublasKernelsKeepTheirLaunchAndOp) {
  SKIP_WITHOUT_GPU();
  const int m = 1024, n = 64, k = 32;  // 02_linear's shapes, in bf16
  __nv_bfloat16 *a = nullptr, *b = nullptr, *c = nullptr;
  CUDA_CHECK(cudaMalloc(&a, m * k * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&b, k * n * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc(&c, m * n * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMemset(a, 0, m * k * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMemset(b, 0, k * n * sizeof(__nv_bfloat16)));
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  const float one = 1, zero = 0;
  const Trace t = profile(Schedule{1, 1, 3}, "gemm_fwd", [&] {
    Range op("aten::mm", Cat::CpuOp);
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k, a, CUDA_R_16BF, k,
                              &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));

  int kernels = 0;
  const TraceIndex index(t);
  for (const Event& kernel : t.events) {
    if (kernel.cat != Cat::Kernel) continue;
    ++kernels;
    SCOPED_TRACE(kernel.name);
    const int op_i = index.op_of(static_cast<int>(&kernel - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr) << "kernel without its op";
    EXPECT_EQ(op->name, "aten::mm");
    const Event* launch = nullptr;
    for (const Event& e : t.events) {
      if ((e.cat == Cat::CudaRuntime || e.cat == Cat::CudaDriver) && e.correlation == kernel.correlation) launch = &e;
    }
    ASSERT_NE(launch, nullptr) << "kernel without its launch call";
    EXPECT_TRUE(contains(*op, *launch)) << launch->name;
    EXPECT_EQ(launch->external_id, op->external_id);
  }
  EXPECT_GE(kernels, 3);
  // Only launch calls come from the driver API, never the driver calls behind every runtime call.
  for (const Event& e : t.events) {
    if (e.cat == Cat::CudaDriver) {
      EXPECT_EQ(e.name.rfind("cuLaunchKernel", 0), 0u) << e.name;
    }
  }
  for (const auto& p : testing::check_trace(nlohmann::json::parse(trace_to_json(t)))) ADD_FAILURE() << p;
}

TEST(Profiler, OnlyOneAtATimeAndRangesWithoutProfiler) {
  SKIP_WITHOUT_GPU();
  {
    Range r("not recorded");  // NVTX only: no profiler is live
  }
  Profiler p(Schedule{0, 0, 1});
  EXPECT_EQ(Profiler::current(), &p);
  EXPECT_THROW(Profiler second(Schedule{0, 0, 1}), Error);
  EXPECT_THROW((void)p.take_trace(), Error);  // not before the last active step
  p.begin_step(0);
  EXPECT_TRUE(p.recording());
  p.end_step(0);
  EXPECT_FALSE(p.recording());
  const Trace t = p.take_trace();
  int steps = 0;
  for (const Event& e : t.events) steps += e.name == "ProfilerStep#0";
  EXPECT_EQ(steps, 1);
}

}  // namespace
}  // namespace ladder
