// The trace tool's views on committed fixtures: our H100 reference traces and two traces PyTorch's profiler wrote on
// the same H100 (bench/torch_vs_ladder.py --keep-traces; unedited).
#include <gtest/gtest.h>

#include <sstream>

#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/renderers/diff.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/timeline.h"

using namespace ladder;

namespace {
const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";
const std::string kData = std::string(LADDER_SOURCE_DIR) + "/common/trace/tests/data/";

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
bool has_line(const std::vector<std::string>& lines, const std::string& prefix, const std::string& part) {
  for (const std::string& l : lines)
    if (l.rfind(prefix, 0) == 0 && l.find(part) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(Diff, TellsTheFusionStory) {
  // The bytes of ladder::gelu_mul, an elementwise op, registered as chapter 03_fused_mlp registers it (work.cpp).
  register_op_work("ladder::gelu_mul", elementwise_work);
  const std::string out = diff_traces(load_trace(kRef + "03_simple_mlp.json"), load_trace(kRef + "03_fused_mlp.json"));
  const auto lines = lines_of(out);
  EXPECT_LE(lines.size(), 14u) << out;
  EXPECT_TRUE(has_line(lines, "  - ", "[aten::gelu]")) << out;
  EXPECT_TRUE(has_line(lines, "  - ", "[aten::mul]")) << out;
  EXPECT_TRUE(has_line(lines, "  + ", "[ladder::gelu_mul]")) << out;
  EXPECT_TRUE(has_line(lines, "  = ", "coopA")) << out;
  EXPECT_TRUE(has_line(lines, "  kernels per step", "5    ->         4")) << out;
  EXPECT_TRUE(has_line(lines, "  step wall time", "->")) << out;
  // gelu moves 2 x 50.3 MB, mul 3 x 50.3 MB, gelu_mul 3 x 50.3 MB: fusion saves the intermediate's round trip.
  EXPECT_TRUE(has_line(lines, "  bytes moved by kernels", "(-100.7 MB)")) << out;
}

TEST(Diff, WorksOnPyTorchTracesToo) {
  const std::string out = diff_traces(load_trace(kData + "torch_03_simple_mlp_compiled_h100.json"),
                                      load_trace(kRef + "03_fused_mlp.json"));
  const auto lines = lines_of(out);
  EXPECT_TRUE(has_line(lines, "  - ", "triton_poi_fused__unsafe_view_gelu_mul_0")) << out;
  EXPECT_TRUE(has_line(lines, "  + ", "[ladder::gelu_mul]")) << out;
  // The GEMMs are the same cuBLAS kernels on both sides.
  EXPECT_TRUE(has_line(lines, "  = ", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT")) << out;
  EXPECT_TRUE(has_line(lines, "  = ", "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT")) << out;
  EXPECT_TRUE(has_line(lines, "  bytes moved", "not derivable")) << out;  // torch recorded no shapes
}

TEST(Timeline, DrawsBothLanesAtTheRequestedWidth) {
  for (const char* f : {"01_matmul_add_size64.json", "03_fused_mlp.json"}) {
    const std::string out = timeline(load_trace(kRef + f), -1, 100);
    const auto lines = lines_of(out);
    ASSERT_GE(lines.size(), 5u) << out;
    EXPECT_NE(lines[0].find("ProfilerStep#4"), std::string::npos) << out;
    int cpu = 0, gpu = 0;
    for (const std::string& l : lines) {
      if (l.rfind("  ranges", 0) == 0) {
        ++cpu;
        EXPECT_EQ(l.size(), 100u) << l;
      }
      if (l.rfind("GPU", 0) == 0) {
        ++gpu;
        EXPECT_EQ(l.size(), 100u) << l;
      }
    }
    EXPECT_EQ(cpu, 1) << out;
    EXPECT_EQ(gpu, 1) << out;
    EXPECT_TRUE(out.find("[matmul_add") != std::string::npos || out.find("[mlp_fwd") != std::string::npos) << out;
  }
}

// Each launch call drawn by its own name (before: every one was "[launch]"), so chapter 01's question, which runtime
// call launches cuBLAS's GEMM and which launches our add, is answered by the timeline: in full where the call is wide
// enough, cut to fit and named in the legend where it is not. A graph replay shows its one cudaGraphLaunch.
TEST(Timeline, LaunchCallsAreDrawnByTheirOwnNames) {
  const Trace t = load_trace(kRef + "01_matmul_add_size64.json");
  const std::string wide = timeline(t, -1, 400);
  EXPECT_NE(wide.find("[cudaLaunchKernelExC-"), std::string::npos) << wide;
  EXPECT_NE(wide.find("[cudaLaunchKernel-"), std::string::npos) << wide;
  const std::string out = timeline(t, -1, 100);
  EXPECT_NE(out.find("[cudaLa~nelExC]"), std::string::npos) << out;
  EXPECT_NE(out.find("\n    [cudaLa~nelExC] cudaLaunchKernelExC\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n    [cudaLa~ernel] cudaLaunchKernel\n"), std::string::npos) << out;
  const std::string graph = timeline(load_trace(kRef + "02_linear_graph.json"), -1, 160);
  EXPECT_NE(graph.find("[cudaGraphLaunch"), std::string::npos) << graph;
  for (const char* f : {"03_simple_mlp.json", "03_fused_mlp.json", "04_epilogue_mlp.json"}) {
    EXPECT_EQ(timeline(load_trace(kRef + f), -1, 100).find("launch]"), std::string::npos) << f;
  }
}

// 03_simple_mlp at 140 columns: its first ops row was all '#' (each op narrower than its name); now each op shows its
// name, cut to fit where it must. (At 100 columns the mul, 2 of them, is still '##'.)
TEST(Timeline, SimpleMlpOpsAreNamedAt140Columns) {
  const std::string out = timeline(load_trace(kRef + "03_simple_mlp.json"), -1, 140);
  for (const std::string& l : lines_of(out)) {
    if (l.rfind("  ops", 0) != 0) continue;
    EXPECT_EQ(std::count(l.begin(), l.end(), '['), 5) << out;  // linear, linear, gelu, mul, linear
    EXPECT_EQ(std::count(l.begin(), l.end(), '#'), 0) << out;
    EXPECT_NE(l.find("[linear---"), std::string::npos) << out;
    break;
  }
}

// In every trace we have, ours and PyTorch's, at three widths: no two ranges run into each other (03_fused_mlp drew
// "[aten::linear-[aten::linear-----]"): in a row, '[' and ']' alternate. Every label is an event's own name or is
// listed in the legend, and a '#' is explained there.
TEST(Timeline, LabelsNeverCollideAndEveryMarkIsExplained) {
  std::vector<std::string> files;
  for (const char* f : {"01_matmul_add_size64.json", "01_matmul_add_size4096.json", "02_linear.json",
                        "02_linear_graph.json", "03_simple_mlp.json", "03_fused_mlp.json", "03_fused_mlp_graph.json",
                        "04_epilogue_mlp.json"}) {
    files.push_back(kRef + f);
  }
  for (const char* f : {"torch211/transformer_fwd_bwd.json", "torch211/two_streams.json",
                        "torch211/cudagraph_mlp.json", "torch_03_simple_mlp_eager.json"}) {
    files.push_back(kData + f);
  }
  for (const std::string& file : files) {
    const Trace t = load_trace(file);
    std::set<std::string> names;
    for (const Event& e : t.events) names.insert(e.name);
    for (const int width : {60, 100, 160}) {
      SCOPED_TRACE(file + " at " + std::to_string(width));
      const std::string out = timeline(t, -1, width);
      bool marks = false;
      for (const std::string& l : lines_of(out)) {
        if (l.rfind("  ranges", 0) != 0 && l.rfind("  ops", 0) != 0 && l.rfind("  calls", 0) != 0) continue;
        const std::string row = l.substr(12);
        marks = marks || row.find('#') != std::string::npos;
        for (size_t open = row.find('['); open != std::string::npos; open = row.find('[', open + 1)) {
          const size_t close = row.find(']', open);
          ASSERT_NE(close, std::string::npos) << l;
          EXPECT_EQ(row.find('[', open + 1) > close, true) << "ranges run into each other: " << l;
          std::string label = row.substr(open + 1, close - open - 1);
          label.erase(label.find_last_not_of('-') + 1);
          EXPECT_TRUE(names.count(label) || out.find("\n    [" + label + "] ") != std::string::npos)
              << "[" << label << "] is neither a name nor in the legend:\n" << out;
        }
      }
      EXPECT_EQ(marks, out.find("\n  # is a range too narrow for any name") != std::string::npos) << out;
    }
  }
}

TEST(Timeline, OverheadBoundStepLeavesTheGpuMostlyIdle) {
  // Size 64: a few us of kernels in a ~40 us step. The GPU row is mostly blank.
  // Size 4096: the GEMM fills the GPU row. Both traces have one stream: exactly one GPU row each, counted first, so a
  // timeline that lost its GPU row fails here instead of passing an empty loop.
  for (const auto& [file, mostly_busy] : {std::pair{"01_matmul_add_size64.json", false},
                                          std::pair{"01_matmul_add_size4096.json", true}}) {
    SCOPED_TRACE(file);
    const std::string out = timeline(load_trace(kRef + file), -1, 120);
    std::vector<std::string> gpu_rows;
    for (const std::string& l : lines_of(out)) {
      if (l.rfind("GPU", 0) == 0) gpu_rows.push_back(l);
    }
    ASSERT_EQ(gpu_rows.size(), 1u) << out;
    const std::string& row = gpu_rows[0];
    ASSERT_EQ(row.size(), 120u) << row;
    const auto busy = std::count_if(row.begin() + 12, row.end(), [](char c) { return c != ' '; });
    if (mostly_busy) {
      EXPECT_GT(busy, (120 - 12) * 3 / 4) << row;
    } else {
      EXPECT_LT(busy, (120 - 12) / 4) << row;
    }
  }
}

TEST(Summary, ReadsAPyTorchTraceRecordedOnTheH100) {
  const Trace t = load_trace(kData + "torch_02_linear_eager_h100.json");
  const std::string table = summary_table(t);
  EXPECT_NE(table.find("aten::addmm"), std::string::npos) << table;
  EXPECT_NE(table.find("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"), std::string::npos) << table;
  EXPECT_NE(table.find("Self CUDA time total:"), std::string::npos) << table;
  const auto steps = step_stats(t);
  ASSERT_EQ(steps.size(), 3u);
  for (const auto& s : steps) EXPECT_EQ(s.kernels, 1);
}
