// ladder-trace diff on committed traces: every GPU activity that counts in GPU busy time gets a row, an = row names
// both ops, a compiled trace shows its kernels, a change from nothing is new or gone, and the bytes line says which
// trace lacks what. Then diff and the step table as CSV and JSON.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trace/analyses/work.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/renderers/diff.h"
#include "trace/renderers/steps_table.h"

using namespace ladder;

namespace {
const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";
const std::string kData = std::string(LADDER_SOURCE_DIR) + "/common/trace/tests/data/";
const std::string kRanks = kData + "torch211_user/ranks/";

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}
// The line that starts with `prefix` and holds `part`, or "".
std::string line_with(const std::string& out, const std::string& prefix, const std::string& part) {
  for (const std::string& l : lines_of(out))
    if (l.rfind(prefix, 0) == 0 && l.find(part) != std::string::npos) return l;
  return "";
}

Event event(Cat cat, const std::string& name, int64_t pid, int64_t tid, int64_t ts, int64_t dur) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = pid;
  e.tid = tid;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}
// One step on the CPU; with `kernel_ns` > 0, one kernel that long inside it.
Trace one_step(int64_t kernel_ns) {
  Trace t;
  t.pid = 1;
  t.events.push_back(event(Cat::UserAnnotation, "ProfilerStep#1", 1, 1, 1000, 10000));
  t.events.push_back(event(Cat::CpuOp, "aten::relu", 1, 1, 2000, 1000));
  if (kernel_ns > 0) t.events.push_back(event(Cat::Kernel, "relu_kernel", 0, 7, 3000, kernel_ns));
  return t;
}
}  // namespace

// Two ranks of a gloo run: their copies (18 per step, HtoD and DtoH) and sets were in GPU busy time with no row.
TEST(DiffRows, CopiesAndSetsHaveRows) {
  const std::string out = diff_traces(load_trace(kRanks + "rank0.1795494530699813983.pt.trace.json.gz"),
                                      load_trace(kRanks + "rank1.1795494530699454387.pt.trace.json.gz"));
  EXPECT_NE(line_with(out, "  = [aten::copy_] Memcpy DtoH (Device -> Pageable) x4", "1890.8 us ->    1795.3 us"), "")
      << out;
  EXPECT_NE(line_with(out, "  = [aten::copy_] Memcpy HtoD (Pageable -> Device) x4", "653.7 us"), "") << out;
  EXPECT_NE(line_with(out, "  = ", "Memset (Device)"), "") << out;
  EXPECT_NE(line_with(out, "  copies+sets/step", "11    ->        10"), "") << out;
}

// Chapter 01's GEMM runs under aten::mm beside the add, and under aten::addmm fused: the row says both.
TEST(DiffRows, EqualRowNamesBothOpsWhenTheyDiffer) {
  const std::string out =
      diff_traces(load_trace(kRef + "01_matmul_add_size4096.json"), load_trace(kRef + "01_matmul_add_size4096_fused.json"));
  EXPECT_NE(line_with(out, "  = [aten::mm | aten::addmm] sm80_xmma_gemm", "2659.1 us ->    2658.9 us"), "") << out;
  // The same op on both sides is named once.
  const std::string same = diff_traces(load_trace(kRef + "03_simple_mlp.json"), load_trace(kRef + "03_fused_mlp.json"));
  EXPECT_NE(line_with(same, "  = [aten::mm] nvjet", "coopB"), "") << same;
}

// Inductor launches its Triton kernel under a cpu_op named like the kernel: the row is the kernel, no bracket.
TEST(DiffRows, CompiledTraceShowsTheKernelNotTheWrapper) {
  const std::string out = diff_traces(load_trace(kData + "torch_03_simple_mlp_compiled_h100.json"),
                                      load_trace(kRef + "03_fused_mlp.json"));
  EXPECT_NE(line_with(out, "  - triton_poi_fused__unsafe_view_gelu_mul_0 ", "50.3 us"), "") << out;
  EXPECT_EQ(line_with(out, "  - [", "triton"), "") << out;
  // The GEMMs it launches from aten::mm keep their op.
  EXPECT_NE(line_with(out, "  = [aten::mm] nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT x2", "118.7 us"), "") << out;
}

// "0.0 us -> 112.8 us (+0.0%)" said nothing: from nothing is new, to nothing is gone.
TEST(DiffRows, NewAndGoneInsteadOfAPercentageOfZero) {
  const Trace none = one_step(0), some = one_step(2000);
  const std::string up = diff_traces(none, some, "cpu.json", "gpu.json");
  EXPECT_NE(line_with(up, "  GPU busy per step", "0.0 us ->       2.0 us  (new)"), "") << up;
  const std::string down = diff_traces(some, none, "gpu.json", "cpu.json");
  EXPECT_NE(line_with(down, "  GPU busy per step", "2.0 us ->       0.0 us  (gone)"), "") << down;
  EXPECT_EQ(line_with(up, "  GPU busy per step", "%"), "") << up;
}

// The bytes line names the trace and the reason: no shapes recorded (the option), or kernels without an op.
TEST(DiffRows, BytesNotDerivableSaysWhichTraceAndWhy) {
  register_op_work("ladder::gelu_mul", elementwise_work);  // as common/work registers it (work/ladder_ops.h)
  const std::string shapes = diff_traces(load_trace(kData + "torch_03_simple_mlp_compiled_h100.json"),
                                         load_trace(kRef + "03_fused_mlp.json"), "compiled.json", "ours.json");
  EXPECT_NE(line_with(shapes, "  bytes moved: not derivable: compiled.json was recorded without input shapes",
                      "record_shapes=True"),
            "")
      << shapes;
  EXPECT_EQ(shapes.find("ours.json", shapes.find("bytes moved")), std::string::npos) << shapes;  // ours has them
  // An op with shapes but no formula is named as such.
  const std::string formula = diff_traces(load_trace(kData + "torch211/transformer_fwd_bwd.json"),
                                          load_trace(kRef + "03_fused_mlp.json"), "torch.json", "ours.json");
  EXPECT_NE(line_with(formula, "  bytes moved: not derivable: no bytes formula for aten::copy_, aten::_efficient_",
                      "more of torch.json"),
            "")
      << formula;
  const std::string graph = diff_traces(load_trace(kRef + "02_linear.json"), load_trace(kRef + "02_linear_graph.json"),
                                        "eager.json", "graph.json");
  EXPECT_NE(line_with(graph, "  bytes moved: not derivable: 1 kernel per step of graph.json carries no op",
                      "replayed from a CUDA graph captured before profiling"),
            "")
      << graph;
}

// ladder-trace diff reads its traces one at a time (two 1 GB traces held together peaked at 1.48 GB): trace A is gone
// before B is read, and the output is the one of the two held together.
TEST(DiffLoaders, OneTraceInMemoryAtATimeSameOutput) {
  const std::string pa = kRef + "01_matmul_add_size4096.json", pb = kRef + "01_matmul_add_size4096_fused.json";
  std::weak_ptr<const OpInputs> held_by_a;  // expires with A's events
  bool a_has_inputs = false, a_gone_when_b_read = false;
  auto load_a = [&] {
    Trace t = load_trace(pa);
    for (const Event& e : t.events) {
      if (e.inputs) held_by_a = e.inputs, a_has_inputs = true;
    }
    return t;
  };
  auto load_b = [&] {
    a_gone_when_b_read = held_by_a.expired();
    return load_trace(pb);
  };
  const std::string one_at_a_time = diff_traces(load_a, load_b, "a", "b");
  ASSERT_TRUE(a_has_inputs) << "A has no op with recorded inputs: the test cannot see when A is dropped";
  EXPECT_TRUE(a_gone_when_b_read);
  EXPECT_EQ(one_at_a_time, diff_traces(load_trace(pa), load_trace(pb), "a", "b"));
}

TEST(DiffRecords, CsvAndJsonHoldEveryRowAndStepFigure) {
  const Trace a = load_trace(kRef + "01_matmul_add_size4096.json"), b = load_trace(kRef + "01_matmul_add_size4096_fused.json");
  const auto rows = nlohmann::json::parse(diff_traces(a, b, "a", "b", "", OutputFormat::Json));
  ASSERT_EQ(rows.size(), 2u + 5u) << rows.dump(1);  // gone add, both GEMM; five step figures
  EXPECT_EQ(rows[0]["change"], "gone");
  EXPECT_EQ(rows[0]["op_a"], "aten::add");
  EXPECT_TRUE(rows[0]["b"].is_null());
  EXPECT_EQ(rows[1]["change"], "both");
  EXPECT_EQ(rows[1]["op_a"], "aten::mm");
  EXPECT_EQ(rows[1]["op_b"], "aten::addmm");
  EXPECT_NEAR(rows[1]["a"].get<double>(), 2659.1, 0.05);
  EXPECT_EQ(rows[2]["name"], "kernels");
  EXPECT_EQ(rows[2]["a"], 2);
  EXPECT_EQ(rows[2]["b"], 1);
  EXPECT_EQ(rows[3]["name"], "copies and sets");
  EXPECT_EQ(rows[4]["name"], "GPU busy");
  EXPECT_NEAR(rows[4]["b"].get<double>(), 2658.9, 0.05);
  EXPECT_EQ(rows[6]["name"], "bytes moved by kernels");
  EXPECT_NEAR(rows[6]["a"].get<double>() - rows[6]["b"].get<double>(), 134.2e6, 0.05e6);
  for (const auto& r : rows) EXPECT_EQ(r["step"], "mean");
  const std::vector<std::string> csv = lines_of(diff_traces(a, b, "a", "b", "3", OutputFormat::Csv));
  ASSERT_EQ(csv.size(), 1u + 7u);
  EXPECT_EQ(csv[0], "step,kind,change,name,op_a,op_b,count_a,count_b,a,b,unit,bytes_a,bytes_b,note");
  EXPECT_EQ(csv[1].rfind("ProfilerStep#3,kernel,gone,\"void ch01::(anonymous namespace)::add_bias_plain<float>(", 0), 0u)
      << csv[1];
}

TEST(StepRecords, CsvAndJsonHoldTheStepTable) {
  const Trace t = load_trace(kRef + "03_fused_mlp.json");
  const TraceIndex index(t);
  const std::vector<StepStats> steps = step_stats(index);
  const auto rows = nlohmann::json::parse(regime_table(index, OutputFormat::Json));
  ASSERT_EQ(rows.size(), steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(rows[k]["step"], steps[k].name);
    EXPECT_EQ(rows[k]["kernels"], steps[k].kernels);
    EXPECT_NEAR(rows[k]["wall_us"].get<double>(), steps[k].dur_ns / 1e3, 1e-3);
    EXPECT_NEAR(rows[k]["gpu_busy_us"].get<double>(), steps[k].gpu_busy_ns / 1e3, 1e-3);
    EXPECT_NEAR(rows[k]["cpu_sync_us"].get<double>(), steps[k].sync_ns / 1e3, 1e-3);
  }
  const std::vector<std::string> csv = lines_of(regime_table(index, OutputFormat::Csv));
  ASSERT_EQ(csv.size(), 1 + steps.size());
  EXPECT_EQ(csv[0], "step,kernels,wall_us,gpu_busy_us,busy_pct,cpu_launch_us,cpu_sync_us");
  EXPECT_EQ(csv[2], "ProfilerStep#3,4,255.728,220.678,86.29403115810548,22.451,163.936");  // every digit
}
