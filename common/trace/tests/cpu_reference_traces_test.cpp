// The committed reference traces (every .json under traces/reference/, found on disk, so a trace committed later is
// checked too) are what readers without a GPU read, so they must load, pass the structural checker, have steps with
// kernels in them, and hold what each chapter's text says they hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/tests/trace_checker.h"

using namespace ladder;

namespace {

const std::string kRoot = std::string(LADDER_SOURCE_DIR) + "/traces/reference/";
std::string ref(const std::string& name) { return kRoot + "h100/" + name; }

// Every committed trace, as a path relative to traces/reference/ ("h100/02_linear.json"), sorted.
std::vector<std::string> committed_traces() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kRoot)) {
    if (e.is_regular_file() && e.path().extension() == ".json")
      out.push_back(std::filesystem::relative(e.path(), kRoot).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What the chapters' text says of each trace (file relative to traces/reference/h100/).
struct Expect {
  const char* file;
  int steps;
  int kernels_per_step;
  std::vector<std::string> kernel_substrings;  // each must name one kernel of every step
};

const Expect kTraces[] = {
    {"01_matmul_add_size64.json", 3, 2, {"gemm", "add_bias"}},
    {"01_matmul_add_size64_fused.json", 3, 1, {"gemm"}},
    {"01_matmul_add_size4096.json", 3, 2, {"gemm", "add_bias"}},
    {"01_matmul_add_size4096_fused.json", 3, 1, {"gemm"}},
    {"01_matmul_add_size64_cold.json", 3, 2, {"gemm", "add_bias"}},
    {"02_linear.json", 3, 1, {"bias"}},
    {"02_linear_graph.json", 3, 1, {"bias"}},
    {"03_simple_mlp.json", 3, 5, {"coopA", "coopB", "gelu_vec", "mul_vec"}},
    {"03_fused_mlp.json", 3, 4, {"coopA", "coopB", "gelu_mul_vec"}},
    {"03_fused_mlp_graph.json", 3, 4, {"coopA", "coopB", "gelu_mul_vec"}},
    {"04_epilogue_mlp.json", 3, 2, {"geglu_gemm_fast", "coopB"}},
    {"07_tp_mlp_tp_b64_s128_d768_h3072_np2/rank0.1795711878581913338.pt.trace.json", 3, 3,
     {"geglu_gemm_fast", "coopB", "ncclDevKernel_AllReduce_Sum_bf16"}},
    {"07_tp_mlp_tp_b64_s128_d768_h3072_np2/rank1.1795711878581913338.pt.trace.json", 3, 3,
     {"geglu_gemm_fast", "coopB", "ncclDevKernel_AllReduce_Sum_bf16"}},
    {"07_tp_mlp_overlap_b64_s128_d768_h3072_np2/rank0.1795711882725893602.pt.trace.json", 3, 6,
     {"geglu_gemm_fast", "coopB", "ncclDevKernel_AllReduce_Sum_bf16"}},
    {"06_train_mlp_eager.json", 3, 15, {"coopA", "coopB", "gelu_vec", "mul_vec", "GeluBackward", "AddOp"}},
    {"06_train_mlp_fused.json", 3, 9, {"coopA", "coopB", "gelu_mul_vec", "gelu_mul_backward"}},
    {"06_train_mlp_epilogue.json", 3, 7, {"geglu_gemm_keep", "transpose", "dgated_gemm"}},
    {"06_train_mlp_recompute.json", 3, 8, {"geglu_gemm_fast", "coopA_TNT", "transpose", "dgated_gemm"}},
    {"runs-without-warmup/01_matmul_add_size64.json", 3, 2, {"gemm", "add_bias"}},
    {"runs-without-warmup/01_matmul_add_size4096.json", 3, 2, {"gemm", "add_bias"}},
};

}  // namespace

TEST(ReferenceTraces, EveryCommittedTraceLoadsPassesTheCheckerAndHasKernelsInEachStep) {
  const std::vector<std::string> files = committed_traces();
  ASSERT_GE(files.size(), std::size(kTraces));
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    std::ifstream in(kRoot + file);
    ASSERT_TRUE(in);
    const nlohmann::json doc = nlohmann::json::parse(in);
    // Our writer's contract holds for what the chapters wrote. The 05_* and torch_* traces (and the rank files in a
    // torch_* folder) were written by torch.profiler (05_torch_op/profile_mlp.py, 06_train_mlp/torch_train_step.py,
    // 07_tp_mlp/torch_tp.py), which breaks it in ways the reader takes (launch arrows whose kernel fell outside the
    // window, for one): for them only the reading below.
    const std::filesystem::path path(file);
    const std::string name = path.filename().string(), folder = path.parent_path().filename().string();
    const bool by_torch = name.rfind("05_", 0) == 0 || name.rfind("torch_", 0) == 0 || folder.rfind("torch_", 0) == 0;
    if (!by_torch)
      for (const std::string& p : ladder::testing::check_trace(doc)) ADD_FAILURE() << p;

    const Trace t = load_trace(kRoot + file);
    EXPECT_TRUE(t.load_note.empty()) << t.load_note;
    // Every GPU the process saw, as torch lists them: one, or the two of the 2-GPU machine that recorded 01-03 and
    // 07_tp_mlp's ranks.
    ASSERT_GE(t.devices.size(), 1u);
    const std::vector<StepStats> steps = step_stats(t);
    ASSERT_FALSE(steps.empty());
    for (const StepStats& s : steps) EXPECT_GT(s.kernels, 0) << s.name;
  }
}

TEST(ReferenceTraces, HoldTheKernelsTheTextPromises) {
  const std::vector<std::string> files = committed_traces();
  for (const Expect& x : kTraces) {
    SCOPED_TRACE(x.file);
    ASSERT_TRUE(std::count(files.begin(), files.end(), std::string("h100/") + x.file)) << "missing " << ref(x.file);
    const Trace t = load_trace(ref(x.file));
    ASSERT_GE(t.devices.size(), 1u);
    for (const auto& d : t.devices) EXPECT_NE(d.name.find("H100"), std::string::npos);
    const std::vector<StepStats> steps = step_stats(t);
    ASSERT_EQ(static_cast<int>(steps.size()), x.steps);
    for (const StepStats& s : steps) {
      EXPECT_EQ(s.kernels, x.kernels_per_step) << s.name;
      for (const std::string& sub : x.kernel_substrings) {
        const bool found = std::any_of(s.gpu_events.begin(), s.gpu_events.end(), [&](const Event* e) {
          return e->cat == Cat::Kernel && e->name.find(sub) != std::string::npos;
        });
        EXPECT_TRUE(found) << s.name << " has no kernel named like '" << sub << "'";
      }
    }
  }
}

TEST(ReferenceTraces, LinearIsOneBiasKernelUnderAddmmAndTLaunchesNothing) {
  const Trace t = load_trace(ref("02_linear.json"));
  int kernels = 0;
  const TraceIndex index(t);
  for (const Event& e : t.events) {
    if (e.cat != Cat::Kernel) continue;
    ++kernels;
    EXPECT_EQ(e.name, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN");  // the same kernel as PyTorch's nn.Linear
    const int op_i = index.op_of(static_cast<int>(&e - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->name, "aten::addmm");
  }
  EXPECT_EQ(kernels, 3);
  // Every `t` range sits beside addmm inside linear, and no GPU work carries its External id.
  for (const Event& e : t.events) {
    if (e.cat != Cat::CpuOp || e.name != "aten::t") continue;
    for (const Event& g : t.events) {
      if (is_gpu_cat(g.cat)) {
        EXPECT_NE(g.external_id, e.external_id);
      }
    }
  }
}
