// The table, the step statistics and the work per op, on small traces built by hand where every number can be
// worked out on paper.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"
#include "trace/model/index.h"
#include "trace/model/trace.h"
#include "trace/renderers/key_averages.h"

namespace ladder {
namespace {

constexpr int64_t kUs = 1000;  // ns per microsecond

Event cpu(Cat cat, const std::string& name, int64_t ts_us, int64_t dur_us, int64_t ext, int64_t corr = -1) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 10;
  e.tid = 10;
  e.ts_ns = ts_us * kUs;
  e.dur_ns = dur_us * kUs;
  e.external_id = ext;
  e.correlation = corr;
  return e;
}

Event gpu(Cat cat, const std::string& name, int64_t ts_ns, int64_t dur_ns, int64_t ext, int64_t corr, int stream = 7) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 0;
  e.tid = stream;
  e.ts_ns = ts_ns;
  e.dur_ns = dur_ns;
  e.external_id = ext;
  e.correlation = corr;
  e.gpu.stream = stream;
  return e;
}

// step (100 us) { fwd (80 us) { A = aten::mm (50 us) { cudaLaunchKernel (10 us) }, B = aten::t (20 us) } }
// and A's kernel of 7 us on the GPU.
Trace tree_trace() {
  Trace t;
  t.events.push_back(cpu(Cat::UserAnnotation, "ProfilerStep#1", 0, 100, 1));
  t.events.push_back(cpu(Cat::UserAnnotation, "fwd", 5, 80, 2));
  t.events.push_back(cpu(Cat::CpuOp, "aten::mm", 10, 50, 3));
  t.events.push_back(cpu(Cat::CudaRuntime, "cudaLaunchKernel", 20, 10, 3, 100));
  t.events.push_back(cpu(Cat::CpuOp, "aten::t", 62, 20, 4));
  t.events.push_back(gpu(Cat::Kernel, "gemm_kernel", 40 * kUs, 7 * kUs, 3, 100));
  return t;
}

// Splits a table row into its cells (cells are separated by at least two spaces; names have single spaces).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  size_t spaces = 0;
  for (char c : line) {
    if (c == ' ') {
      ++spaces;
      continue;
    }
    if (spaces >= 2 && !cur.empty()) {
      out.push_back(cur);
      cur.clear();
    } else if (spaces == 1 && !cur.empty()) {
      cur += ' ';
    }
    spaces = 0;
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> row(const std::string& table, const std::string& name) {
  for (const std::string& l : lines_of(table)) {
    auto c = cells(l);
    if (!c.empty() && c[0] == name) return c;
  }
  return {};
}

TEST(SummaryTable, SelfAndTotalTimesOnAHandBuiltTree) {
  const std::string table = summary_table(tree_trace());
  SCOPED_TRACE(table);
  // Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %, CUDA total,
  // CUDA time avg, # of Calls.
  using V = std::vector<std::string>;
  // Step: 100 us minus fwd's 80 us.
  EXPECT_EQ(row(table, "ProfilerStep*"), (V{"ProfilerStep*", "20.00%", "20.000us", "100.00%", "100.000us", "100.000us",
                                            "0.000us", "0.00%", "7.000us", "7.000us", "1"}));
  // fwd: 80 us minus A (50) and B (20).
  EXPECT_EQ(row(table, "fwd"), (V{"fwd", "10.00%", "10.000us", "80.00%", "80.000us", "80.000us", "0.000us", "0.00%",
                                  "7.000us", "7.000us", "1"}));
  // A: 50 us minus its launch call (10); the kernel is its own GPU time.
  EXPECT_EQ(row(table, "aten::mm"), (V{"aten::mm", "40.00%", "40.000us", "50.00%", "50.000us", "50.000us", "7.000us",
                                       "100.00%", "7.000us", "7.000us", "1"}));
  EXPECT_EQ(row(table, "cudaLaunchKernel"), (V{"cudaLaunchKernel", "10.00%", "10.000us", "10.00%", "10.000us",
                                               "10.000us", "0.000us", "0.00%", "0.000us", "0.000us", "1"}));
  EXPECT_EQ(row(table, "aten::t"), (V{"aten::t", "20.00%", "20.000us", "20.00%", "20.000us", "20.000us", "0.000us",
                                      "0.00%", "0.000us", "0.000us", "1"}));
  EXPECT_EQ(row(table, "gemm_kernel"), (V{"gemm_kernel", "0.00%", "0.000us", "0.00%", "0.000us", "0.000us", "7.000us",
                                          "100.00%", "7.000us", "7.000us", "1"}));

  const auto lines = lines_of(table);
  ASSERT_EQ(lines.size(), 3u + 6u + 1u + 2u);
  // Name column: longest name (16) + 4 = 20, the rest 12 wide, two spaces after each cell.
  EXPECT_EQ(
      lines[0], std::string(20, '-') + "  " + [] {
        std::string s;
        for (int i = 0; i < 10; ++i) s += std::string(12, '-') + "  ";
        return s;
      }());
  EXPECT_EQ(lines[1],
            "                Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA"
            "   Self CUDA %    CUDA total  CUDA time avg    # of Calls  ");
  EXPECT_EQ(lines[3],
            "       ProfilerStep*        20.00%      20.000us       100.00%     100.000us     100.000us       0.000us"
            "         0.00%       7.000us       7.000us             1  ");
  // Sorted by CUDA total, ties in the order the events happened.
  EXPECT_EQ(cells(lines[4])[0], "fwd");
  EXPECT_EQ(cells(lines[5])[0], "aten::mm");
  EXPECT_EQ(cells(lines[6])[0], "gemm_kernel");
  EXPECT_EQ(cells(lines[7])[0], "cudaLaunchKernel");
  EXPECT_EQ(cells(lines[8])[0], "aten::t");
  EXPECT_EQ(lines[10], "Self CPU time total: 100.000us");
  EXPECT_EQ(lines[11], "Self CUDA time total: 7.000us");
}

TEST(SummaryTable, AggregatesStepsAndAnnotationsLikeTorch) {
  Trace t = tree_trace();
  // A second step, 1.5 ms long, with a 2 ms kernel: times switch to ms, steps aggregate as ProfilerStep*.
  t.events.push_back(cpu(Cat::UserAnnotation, "ProfilerStep#2", 200, 1500, 5));
  t.events.push_back(cpu(Cat::CpuOp, "aten::mm", 210, 100, 6));
  t.events.push_back(gpu(Cat::Kernel, "gemm_kernel", 300 * kUs, 2000 * kUs, 6, 101));
  // The user range's span on the GPU lane: its own row, with its span as CUDA time and no CPU time.
  t.events.push_back(gpu(Cat::GpuUserAnnotation, "fwd", 40 * kUs - 1, 7 * kUs + 2, 2, -1));
  const std::string table = summary_table(t);
  SCOPED_TRACE(table);
  using V = std::vector<std::string>;
  EXPECT_EQ(row(table, "ProfilerStep*"), (V{"ProfilerStep*", "88.75%", "1.420ms", "100.00%", "1.600ms", "800.000us",
                                            "0.000us", "0.00%", "2.007ms", "1.004ms", "2"}));
  EXPECT_EQ(row(table, "gemm_kernel")[10], "2");
  EXPECT_EQ(row(table, "gemm_kernel")[7], "100.00%");
  // "fwd" appears twice: its CPU range, and its span on the GPU lane (no CPU time). The span was written 1 ns wider
  // on each side (so it encloses its kernel); the table counts the 7 us between the kernel's start and end.
  int fwd_rows = 0;
  for (const auto& l : lines_of(table)) {
    auto c = cells(l);
    if (!c.empty() && c[0] == "fwd") {
      ++fwd_rows;
      if (c[2] == "0.000us") {
        EXPECT_EQ(c[6], "7.000us");  // Self CUDA of the GPU span
        EXPECT_EQ(c[7], "0.35%");    // over the 2.007 ms of kernels, as torch computes it
        EXPECT_EQ(c[10], "1");
      }
    }
  }
  EXPECT_EQ(fwd_rows, 2);
  EXPECT_NE(table.find("Self CPU time total: 1.600ms\nSelf CUDA time total: 2.007ms\n"), std::string::npos);
}

TEST(SummaryTable, RowLimitAndNoGpuColumnsWithoutGpuTime) {
  Trace t;
  t.events.push_back(cpu(Cat::CpuOp, "a", 0, 10, 1));
  t.events.push_back(cpu(Cat::CpuOp, "b", 20, 10, 2));
  const std::string table = summary_table(t, 1);
  EXPECT_EQ(table.find("CUDA"), std::string::npos) << table;
  EXPECT_EQ(lines_of(table).size(), 3u + 1u + 1u + 1u) << table;
  EXPECT_NE(table.find("Self CPU time total: 20.000us"), std::string::npos);
}

TEST(StepStats, BusyTimeIsTheUnionOfGpuWork) {
  Trace t;
  t.events.push_back(cpu(Cat::UserAnnotation, "ProfilerStep#2", 0, 100, 1));
  t.events.push_back(cpu(Cat::CpuOp, "op", 1, 50, 2));
  t.events.push_back(cpu(Cat::CudaRuntime, "cudaLaunchKernel", 2, 5, 2, 500));
  t.events.push_back(cpu(Cat::CudaDriver, "cuLaunchKernelEx", 8, 3, 2, 501));
  t.events.push_back(cpu(Cat::CudaRuntime, "cudaMemsetAsync", 12, 1, 2, 502));
  t.events.push_back(cpu(Cat::CudaRuntime, "cudaDeviceSynchronize", 60, 30, -1, 503));
  // Two kernels on two streams overlapping by 50 ns: 100..200 and 150..300 cover 200 ns, not 250.
  t.events.push_back(gpu(Cat::Kernel, "k1", 10 * kUs + 100, 100, 2, 500, 7));
  t.events.push_back(gpu(Cat::Kernel, "k2", 10 * kUs + 150, 150, 2, 501, 13));
  t.events.push_back(gpu(Cat::GpuMemset, "Memset (Device)", 10 * kUs + 400, 50, 2, 502, 7));
  // Step 3: its kernel runs after the step ended on the CPU, but its launch was made inside the step.
  t.events.push_back(cpu(Cat::UserAnnotation, "ProfilerStep#3", 200, 100, 3));
  t.events.push_back(cpu(Cat::CpuOp, "op", 201, 50, 4));
  t.events.push_back(cpu(Cat::CudaRuntime, "cudaLaunchKernel", 202, 5, 4, 600));
  t.events.push_back(gpu(Cat::Kernel, "k3", 400 * kUs, 1000, 4, 600));
  // No launch call in the trace for this one, but the op that launched it is in step 3.
  t.events.push_back(gpu(Cat::Kernel, "k4", 402 * kUs, 500, 4, 601));
  // GPU annotations are spans, not work: they do not count.
  t.events.push_back(gpu(Cat::GpuUserAnnotation, "fwd", 10 * kUs + 99, 400, 1, -1));

  const auto steps = step_stats(t);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "ProfilerStep#2");
  EXPECT_EQ(steps[0].ts_ns, 0);
  EXPECT_EQ(steps[0].dur_ns, 100 * kUs);
  EXPECT_EQ(steps[0].kernels, 2);
  ASSERT_EQ(steps[0].gpu_events.size(), 3u);
  EXPECT_EQ(steps[0].gpu_events[0]->name, "k1");
  EXPECT_EQ(steps[0].gpu_events[2]->name, "Memset (Device)");
  EXPECT_EQ(steps[0].gpu_busy_ns, 200 + 50);
  EXPECT_EQ(steps[0].launch_ns, 8 * kUs);  // cudaLaunchKernel 5 + cuLaunchKernelEx 3; memset calls are not launches
  EXPECT_EQ(steps[0].sync_ns, 30 * kUs);
  EXPECT_EQ(steps[1].name, "ProfilerStep#3");
  EXPECT_EQ(steps[1].kernels, 2);
  EXPECT_EQ(steps[1].gpu_busy_ns, 1000 + 500);
  EXPECT_EQ(steps[1].launch_ns, 5 * kUs);
  EXPECT_EQ(steps[1].sync_ns, 0);
}

TEST(StepStats, NoStepsIsOneWindowOverTheWholeTrace) {
  Trace t;
  t.events.push_back(cpu(Cat::CpuOp, "op", 0, 10, 1));
  t.events.push_back(cpu(Cat::CpuOp, "later", 20, 35, 2));
  const TraceIndex index(t);
  EXPECT_TRUE(index.whole_trace());
  const auto steps = step_stats(index);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].name, "whole trace");
  EXPECT_EQ(steps[0].ts_ns, t.events[0].ts_ns);
  EXPECT_EQ(steps[0].ts_ns + steps[0].dur_ns, t.events[1].end_ns());
  EXPECT_TRUE(step_stats(Trace{}).empty());
}

Event op_with(const std::string& name, std::vector<std::vector<int64_t>> dims, std::vector<std::string> types) {
  Event e = cpu(Cat::CpuOp, name, 0, 1, 1);
  e.set_inputs(std::move(dims), std::move(types));
  return e;
}

TEST(OpWork, Gemms) {
  Work w;
  ASSERT_TRUE(op_work(op_with("aten::mm", {{1024, 32}, {32, 64}}, {"float", "float"}), &w));
  EXPECT_EQ(w.flops, 2.0 * 1024 * 64 * 32);
  EXPECT_EQ(w.bytes, (1024.0 * 32 + 32 * 64 + 1024 * 64) * 4);

  ASSERT_TRUE(
      op_work(op_with("addmm", {{64}, {1024, 32}, {32, 64}}, {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}), &w));
  EXPECT_EQ(w.flops, 2.0 * 1024 * 64 * 32);
  EXPECT_EQ(w.bytes, (64.0 + 1024 * 32 + 32 * 64 + 1024 * 64) * 2);

  // matmul folds [64, 128, 768] into 8192 rows.
  ASSERT_TRUE(op_work(op_with("aten::matmul", {{64, 128, 768}, {768, 3072}}, {"c10::BFloat16", "c10::BFloat16"}), &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * 3072 * 768);
  EXPECT_EQ(w.bytes, (8192.0 * 768 + 768 * 3072 + 8192 * 3072) * 2);

  // linear: W is [out, in]; with and without a bias.
  ASSERT_TRUE(op_work(op_with("linear", {{64, 128, 768}, {3072, 768}}, {"c10::BFloat16", "c10::BFloat16"}), &w));
  EXPECT_EQ(w.flops, 2.0 * 8192 * 3072 * 768);
  EXPECT_EQ(w.bytes, (8192.0 * 768 + 3072 * 768 + 8192 * 3072) * 2);
  ASSERT_TRUE(op_work(op_with("aten::linear", {{1024, 32}, {64, 32}, {64}}, {"float", "float", "float"}), &w));
  EXPECT_EQ(w.flops, 2.0 * 1024 * 64 * 32);
  EXPECT_EQ(w.bytes, (1024.0 * 32 + 64 * 32 + 64 + 1024 * 64) * 4);
}

TEST(OpWork, Elementwise) {
  Work w;
  const double n = 8192.0 * 3072;
  ASSERT_TRUE(op_work(op_with("aten::gelu", {{8192, 3072}}, {"c10::BFloat16"}), &w));
  EXPECT_EQ(w.bytes, 2 * n * 2);
  EXPECT_EQ(w.flops, 0);
  ASSERT_TRUE(op_work(op_with("mul", {{8192, 3072}, {8192, 3072}}, {"c10::BFloat16", "c10::BFloat16"}), &w));
  EXPECT_EQ(w.bytes, 3 * n * 2);
  // A broadcast bias: the output is as large as the largest input. A Scalar argument moves no tensor bytes.
  ASSERT_TRUE(op_work(op_with("aten::add", {{1024, 64}, {64}, {}}, {"float", "float", "Scalar"}), &w));
  EXPECT_EQ(w.bytes, (65536.0 + 64 + 65536) * 4);
  ASSERT_TRUE(op_work(op_with("add", {{4}, {4}}, {"double", "double"}), &w));
  EXPECT_EQ(w.bytes, 12.0 * 8);
}

// An op PyTorch does not define is unknown until whoever defines it registers its formula (the ladder's chapters
// register theirs: 03_fused_mlp/work.cpp, 04_epilogue_mlp/work.cpp, each with its own test).
bool twice_the_first_input(const Event& op, Work* w) {
  w->flops = 0;
  w->bytes = 2 * numel(op.input_dims()[0]) * static_cast<double>(dtype_bytes(op.input_types()[0]));
  return true;
}

TEST(OpWork, RegisteredFormulas) {
  Work w;
  const Event op = op_with("test::copy_twice", {{10, 10}}, {"float"});
  EXPECT_FALSE(op_work(op, &w));  // unknown until registered
  register_op_work("test::copy_twice", twice_the_first_input);
  ASSERT_TRUE(op_work(op, &w));
  EXPECT_EQ(w.bytes, 800.0);
}

TEST(OpWork, UnknownOrInconsistentOps) {
  Work w;
  EXPECT_FALSE(op_work(op_with("aten::t", {{64, 32}}, {"float"}), &w));
  EXPECT_FALSE(op_work(op_with("aten::mm", {{64, 32}, {16, 8}}, {"float", "float"}), &w));  // K differs
  EXPECT_FALSE(op_work(op_with("aten::mm", {{64, 32}, {32, 8}}, {}), &w));                  // no dtypes
  EXPECT_FALSE(op_work(op_with("aten::mm", {}, {}), &w));                                   // shapes not recorded
  EXPECT_FALSE(op_work(op_with("aten::gelu", {{8}}, {"mystery"}), &w));
}

TEST(LaunchingOp, ByExternalIdOrThroughTheLaunchCall) {
  Trace t = tree_trace();
  const int kernel = 5;
  auto op_name = [&](const Trace& trace) {
    const int op = TraceIndex(trace).op_of(kernel);
    return op < 0 ? std::string("none") : trace.events[op].name;
  };
  EXPECT_EQ(op_name(t), "aten::mm");
  t.events[kernel].external_id = -1;  // the launch call (correlation 100) still knows its op
  EXPECT_EQ(op_name(t), "aten::mm");
  t.events[kernel].correlation = 999;
  EXPECT_EQ(op_name(t), "none");
}

TEST(Cats, NamesRoundTrip) {
  for (Cat c : {Cat::UserAnnotation, Cat::CpuOp, Cat::CudaRuntime, Cat::CudaDriver, Cat::Kernel, Cat::GpuMemcpy,
                Cat::GpuMemset, Cat::GpuUserAnnotation}) {
    EXPECT_EQ(cat_from_name(cat_name(c)), c) << cat_name(c);
  }
  EXPECT_EQ(cat_from_name("python_function"), Cat::Other);
  EXPECT_TRUE(is_gpu_cat(Cat::Kernel));
  EXPECT_TRUE(is_gpu_cat(Cat::GpuUserAnnotation));
  EXPECT_FALSE(is_gpu_cat(Cat::CudaRuntime));
}


}  // namespace
}  // namespace ladder
