// Traces that torch.profiler wrote on an H100 (tests/data, copied unedited from the reference set) read into our
// model: the links, the steps and the summary table must come out as PyTorch's own tools show them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/renderers/key_averages.h"
#include "trace/tests/trace_checker.h"

namespace ladder {
namespace {

std::string data(const std::string& name) { return std::string(LADDER_TEST_DATA) + "/" + name; }

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One table of key_averages_tables.txt: the lines after "==== <title> ====" up to the blank line.
std::string torch_table(const std::string& title) {
  std::istringstream in(read_file(data("key_averages_tables.txt")));
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "==== " + title + " ====") {
      inside = true;
      continue;
    }
    if (inside && line.empty()) break;
    if (inside) out += line + "\n";
  }
  return out;
}

std::vector<std::string> row(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string l; std::getline(in, l);) {
    // Cells are separated by runs of two or more spaces.
    std::vector<std::string> c;
    std::string cur;
    size_t spaces = 0;
    for (char ch : l) {
      if (ch == ' ') {
        ++spaces;
        continue;
      }
      if (spaces >= 2 && !cur.empty())
        c.push_back(cur), cur.clear();
      else if (spaces == 1 && !cur.empty())
        cur += ' ';
      spaces = 0;
      cur += ch;
    }
    if (!cur.empty()) c.push_back(cur);
    if (!c.empty() && c[0] == name) return c;
  }
  return {};
}

TEST(TorchTrace, LinearEagerLinksKernelToAddmm) {
  const Trace t = load_trace(data("torch_02_linear_eager.json"));
  EXPECT_EQ(t.base_time_ns, 1790857026000000000);
  EXPECT_EQ(t.pid, 578);
  EXPECT_EQ(t.process_name, "python3");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.devices[0].num_sms, 132);
  EXPECT_EQ(t.metadata.at("cupti_version"), "130001");

  int kernels = 0;
  const TraceIndex index(t);
  for (const Event& e : t.events) {
    if (e.cat != Cat::Kernel) continue;
    ++kernels;
    EXPECT_EQ(e.name, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN");
    EXPECT_EQ(e.gpu.stream, 7);
    EXPECT_EQ(e.gpu.registers_per_thread, 168);
    EXPECT_EQ(e.gpu.grid[1], 64);
    EXPECT_EQ(e.gpu.block[0], 384);
    const int op_i = index.op_of(static_cast<int>(&e - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->name, "aten::addmm");
    EXPECT_EQ(op->external_id, e.external_id);
  }
  EXPECT_EQ(kernels, 3);

  // The first kernel, to the nanosecond: ts 4420865962952.924 us after the base, 2.56 us long.
  const Event* first = nullptr;
  for (const Event& e : t.events) {
    if (e.cat == Cat::Kernel && (!first || e.ts_ns < first->ts_ns)) first = &e;
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->ts_ns, 1790857026000000000 + 4420865962952924);
  EXPECT_EQ(first->dur_ns, 2560);
  EXPECT_EQ(first->correlation, 48);
}

TEST(TorchTrace, LinearEagerSteps) {
  const Trace t = load_trace(data("torch_02_linear_eager.json"));
  const auto steps = step_stats(t);
  ASSERT_EQ(steps.size(), 3u);
  const int64_t kernel_ns[] = {2560, 2528, 2560};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(steps[k].name, "ProfilerStep#" + std::to_string(k + 2));
    EXPECT_EQ(steps[k].kernels, 1);
    ASSERT_EQ(steps[k].gpu_events.size(), 1u);
    EXPECT_EQ(steps[k].gpu_busy_ns, kernel_ns[k]);
  }
  EXPECT_EQ(steps[0].dur_ns, 405434);
  EXPECT_EQ(steps[0].launch_ns, 42721);  // one cuLaunchKernelEx
  EXPECT_EQ(steps[0].sync_ns, 11837);    // the step's cudaDeviceSynchronize
}

TEST(TorchTrace, LinearEagerTable) {
  // These numbers come from this trace file. key_averages_tables.txt's "02_linear (eager)" table was printed from
  // another run (its kernel total is 7.521us; the three kernels in this file add up to 7.648us), so only the
  // structure is compared with it here; the 01 tables below are compared number for number.
  const std::string table = summary_table(load_trace(data("torch_02_linear_eager.json")));
  SCOPED_TRACE(table);
  using V = std::vector<std::string>;
  const V addmm = row(table, "aten::addmm");
  ASSERT_EQ(addmm.size(), 11u);
  EXPECT_EQ(addmm[6], "7.648us");  // Self CUDA: its kernels
  EXPECT_EQ(addmm[7], "100.00%");
  EXPECT_EQ(addmm[8], "7.648us");  // CUDA total
  EXPECT_EQ(addmm[9], "2.549us");
  EXPECT_EQ(addmm[10], "3");
  EXPECT_EQ(addmm[4], "317.631us");  // CPU total: 173.459 + 65.448 + 78.724
  const V kernel = row(table, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN");
  ASSERT_EQ(kernel.size(), 11u);
  EXPECT_EQ(kernel[2], "0.000us");
  EXPECT_EQ(kernel[6], "7.648us");
  const V linear = row(table, "aten::linear");
  ASSERT_EQ(linear.size(), 11u);
  EXPECT_EQ(linear[6], "0.000us");
  EXPECT_EQ(linear[8], "7.648us");                          // through its child addmm
  EXPECT_EQ(row(table, "cudaDeviceSynchronize")[10], "4");  // three in the steps, torch's last one outside them
  EXPECT_EQ(row(table, "ProfilerStep*")[10], "3");
  EXPECT_NE(table.find("Self CUDA time total: 7.648us\n"), std::string::npos);

  // Same rows, same order, same layout as torch's table of that run.
  auto names = [](const std::string& tab) {
    std::vector<std::string> out;
    std::istringstream in(tab);
    for (std::string l; std::getline(in, l);) {
      if (l.empty() || l[0] == '-' || l.rfind("Self ", 0) == 0) continue;
      const size_t cut = l.find_first_not_of(' ');
      out.push_back(l.substr(cut, l.find("  ", cut) - cut));
    }
    return out;
  };
  const std::string theirs = torch_table("02_linear --batch 1024 --in_dim 32 --out_dim 64 (eager)");
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(names(table), names(theirs));
  EXPECT_EQ(table.substr(0, table.find('\n')), theirs.substr(0, theirs.find('\n')));
}

// Our table printed from torch's trace equals torch's own table, character for character.
struct TableCase {
  const char* file;
  const char* title;
};
class TorchTable : public ::testing::TestWithParam<TableCase> {};

TEST_P(TorchTable, MatchesKeyAveragesExactly) {
  const std::string theirs = torch_table(GetParam().title);
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(summary_table(load_trace(data(GetParam().file))), theirs);
}

INSTANTIATE_TEST_SUITE_P(
    H100, TorchTable,
    ::testing::Values(TableCase{"torch_01_matmul_add_64_eager.json", "01_matmul_add --size 64 float32 (eager)"},
                      TableCase{"torch_01_matmul_add_64_compiled.json", "01_matmul_add --size 64 float32 (compiled)"},
                      TableCase{"torch_01_matmul_add_4096_eager.json", "01_matmul_add --size 4096 float32 (eager)"},
                      TableCase{"torch_01_matmul_add_4096_compiled.json",
                                "01_matmul_add --size 4096 float32 (compiled)"}));

TEST(TorchTrace, SimpleMlpEager) {
  const Trace t = load_trace(data("torch_03_simple_mlp_eager.json"));
  const auto steps = step_stats(t);
  ASSERT_EQ(steps.size(), 3u);
  for (const StepStats& s : steps) {
    EXPECT_EQ(s.kernels, 5) << s.name;             // gate, up, gelu, mul, down
    EXPECT_EQ(s.gpu_events.size(), 7u) << s.name;  // plus two cuBLAS workspace memsets
  }
  // Kernel -> op links: the GEMMs come from aten::mm, the elementwise kernels from gelu and mul.
  int mm = 0, gelu = 0, mul = 0;
  const TraceIndex index(t);
  for (const Event& e : t.events) {
    if (e.cat != Cat::Kernel) continue;
    const int op_i = index.op_of(static_cast<int>(&e - t.events.data()));
    const Event* op = op_i >= 0 ? &t.events[op_i] : nullptr;
    ASSERT_NE(op, nullptr) << e.name;
    mm += op->name == "aten::mm";
    gelu += op->name == "aten::gelu";
    mul += op->name == "aten::mul";
  }
  EXPECT_EQ(mm, 9);
  EXPECT_EQ(gelu, 3);
  EXPECT_EQ(mul, 3);

  const std::string table = summary_table(t);
  SCOPED_TRACE(table);
  EXPECT_EQ(row(table, "aten::mm")[10], "9");
  // aten::mm launched the 9 GEMMs (345.126 + 153.985 us) and the 6 memsets before them (4.352 us).
  EXPECT_EQ(row(table, "aten::mm")[6], "503.463us");
  EXPECT_EQ(row(table, "aten::mm")[8], "503.463us");
  EXPECT_NE(table.find("Self CUDA time total: 761.579us\n"), std::string::npos);
  EXPECT_EQ(row(table, "Memset (Device)")[6], "4.352us");
  EXPECT_EQ(row(table, "Memset (Device)")[10], "6");
  // The forward's span on the GPU lane is listed first, as in torch's table: it is longer than the kernels' sum.
  std::istringstream in(table);
  std::string l;
  for (int i = 0; i < 4; ++i) std::getline(in, l);
  EXPECT_NE(l.find("mlp_fwd"), std::string::npos) << l;
}

class TorchTraceShape : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchTraceShape, NestsStrictlyAndFlowsLand) {
  const auto doc = nlohmann::json::parse(read_file(data(GetParam())));
  testing::CheckOptions opt;
  opt.allow_unpaired_flows = true;  // torch pairs no "f" with cudaDeviceSynchronize's "s", and the reverse
  const auto problems = testing::check_trace(doc, opt);
  for (const auto& p : problems) ADD_FAILURE() << p;
}

INSTANTIATE_TEST_SUITE_P(H100, TorchTraceShape,
                         ::testing::Values("torch_02_linear_eager.json", "torch_03_simple_mlp_eager.json",
                                           "torch_01_matmul_add_64_eager.json", "torch_01_matmul_add_4096_eager.json",
                                           "torch_01_matmul_add_64_compiled.json",
                                           "torch_01_matmul_add_4096_compiled.json"));

}  // namespace
}  // namespace ladder
