// The committed H100 reference traces (traces/reference/h100/) are what readers without a GPU read, so they must load,
// pass the structural checker, and hold what each chapter's text says they hold.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trace/analysis.h"
#include "trace/trace.h"
#include "trace/tests/trace_checker.h"

using namespace ladder;

namespace {

std::string ref(const std::string& name) { return std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/" + name; }

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
};

}  // namespace

TEST(ReferenceTraces, LoadPassTheCheckerAndHoldTheKernelsTheTextPromises) {
  for (const Expect& x : kTraces) {
    SCOPED_TRACE(x.file);
    std::ifstream in(ref(x.file));
    ASSERT_TRUE(in) << "missing " << ref(x.file);
    const nlohmann::json doc = nlohmann::json::parse(in);
    for (const std::string& p : ladder::testing::check_trace(doc)) ADD_FAILURE() << p;

    const Trace t = load_trace(ref(x.file));
    ASSERT_EQ(t.devices.size(), 1u);
    EXPECT_NE(t.devices[0].name.find("H100"), std::string::npos);
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
  for (const Event& e : t.events) {
    if (e.cat != Cat::Kernel) continue;
    ++kernels;
    EXPECT_EQ(e.name, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN");  // the same kernel as PyTorch's nn.Linear
    const Event* op = launching_op(t, e);
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
