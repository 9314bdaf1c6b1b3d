// What a reader sees in the views and pictures: each case here was a reader's complaint about a real trace (a float32
// GEMM rated against the BF16 tensor-core peak, torch's FLOPs column missing, a legend number never drawn, two launch
// calls with one mark, two kernels cut to one name).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trace/analyses/peaks.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/renderers/diff.h"
#include "trace/renderers/kernels_view.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/svg.h"
#include "trace/renderers/timeline.h"

namespace ladder {
namespace {

const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(cell), cell.clear();
    else cell += c;
  }
  out.push_back(cell);
  return out;
}

std::string event(const std::string& cat, const std::string& name, double ts, double dur,
                  const std::string& args = "") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + (args.empty() ? "" : ", \"args\": " + args) +
         "}";
}

Trace trace_of(const std::vector<std::string>& events) {
  std::string all;
  for (const std::string& e : events) all += (all.empty() ? "" : ",") + e;
  return parse_trace(R"({"traceEvents": [)" + all + "]}", "reader.json");
}

TEST(KernelsPeak, Float32GemmIsRatedAgainstTheFp32Peak) {
  // Chapter 01's 4096 float32 GEMM runs on the CUDA cores (cuBLAS's sm80_xmma f32f32 kernel, no tensor cores): its
  // % of peak is of the H100's 67 TFLOP/s FP32, not of 989.5 dense BF16.
  const Trace t = load_trace(kRef + "01_matmul_add_size4096.json");
  KernelViewOptions opt;
  opt.format = OutputFormat::Csv;
  opt.peak = peak_of(t.devices.front().name);
  ASSERT_EQ(opt.peak.fp32_tflops, 67);
  const auto lines = lines_of(kernels_view(TraceIndex(t), opt));
  const auto head = csv_cells(lines.at(0));
  auto col = [&](const char* name) { return std::find(head.begin(), head.end(), name) - head.begin(); };
  bool seen = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto row = csv_cells(lines[i]);
    if (row.at(col("name")).find("gemm") == std::string::npos) continue;
    seen = true;
    EXPECT_EQ(row.at(col("tensor_cores")), "no") << lines[i];
    const double tflops = std::stod(row.at(col("tflops"))), pct = std::stod(row.at(col("tflops_pct")));
    EXPECT_NEAR(pct, 100 * tflops / 67, 0.06) << lines[i];
  }
  EXPECT_TRUE(seen);
  opt.format = OutputFormat::Text;
  EXPECT_NE(kernels_view(TraceIndex(t), opt).find("67 TFLOP/s FP32 on the CUDA cores (TC no)"), std::string::npos);
}

TEST(SummaryFlops, TotalFlopsColumnAsTorchPrintsIt) {
  // torch's _build_table: "Total " + the unit of the smallest positive sum (here 5e6: MFLOPs), each cell
  // "{:8.3f}" of the sum in that unit, "--" for a row without FLOPs, in a 12-wide column after "# of Calls".
  const Trace t = trace_of({event("cpu_op", "aten::mm", 0, 10, R"({"flops": 2000000000})"),
                            event("cpu_op", "aten::mm", 20, 10, R"({"flops": 2000000000})"),
                            event("cpu_op", "aten::conv2d", 40, 10, R"({"flops": 5000000})"),
                            event("cpu_op", "aten::relu", 60, 10)});
  const std::string out = summary_table(TraceIndex(t), TableOptions{});
  EXPECT_NE(out.find("  # of Calls  Total MFLOPs  \n"), std::string::npos) << out;
  EXPECT_NE(out.find("           2      4000.000  \n"), std::string::npos) << out;
  EXPECT_NE(out.find("           1         5.000  \n"), std::string::npos) << out;
  EXPECT_NE(out.find("           1            --  \n"), std::string::npos) << out;
  // Without "flops" in the trace there is no such column, as torch prints none without with_flops=True.
  EXPECT_EQ(summary_table(TraceIndex(trace_of({event("cpu_op", "aten::mm", 0, 10)})), TableOptions{}).find("FLOPs"),
            std::string::npos);
  TableOptions csv;
  csv.format = OutputFormat::Csv;
  EXPECT_NE(summary_table(TraceIndex(t), csv).find(",Total FLOPs,device\n"), std::string::npos);
}

TEST(TimelineMarks, TwoLaunchCallsNeverShareAMark) {
  // cudaLaunchKernel and cuLaunchKernelEx, each a few columns wide: both used to be cut to their capitals' head.
  const Trace t = trace_of({event("user_annotation", "ProfilerStep#1", 0, 1000),
                            event("cuda_runtime", "cudaLaunchKernel", 100, 100),
                            event("cuda_driver", "cuLaunchKernelEx", 500, 100)});
  for (const int width : {40, 50, 60, 70}) {
    const std::string out = timeline(t, -1, width);
    std::map<std::string, std::set<std::string>> names_of;  // legend: mark -> names
    for (const std::string& l : lines_of(out)) {
      std::smatch m;
      if (std::regex_match(l, m, std::regex(R"( +\[([^\]]+)\] (.*))"))) names_of[m[1]].insert(m[2]);
    }
    for (const auto& [mark, names] : names_of) {
      for (const std::string& n : names) {
        EXPECT_FALSE(n.find("cudaLaunchKernel") != std::string::npos && n.find("cuLaunchKernelEx") != std::string::npos)
            << "[" << mark << "] stands for both at width " << width << ":\n" << out;
      }
    }
  }
}

TEST(DiffNames, TwoKernelsAreNeverCutToOneName) {
  const std::string head = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_bf16_256x128_32x3_nn_align8";
  const Trace a = trace_of({event("user_annotation", "ProfilerStep#1", 0, 100),
                            event("kernel", head + "_variant_A>(Params)", 10, 5)});
  const Trace b = trace_of({event("user_annotation", "ProfilerStep#1", 0, 100),
                            event("kernel", head + "_variant_B>(Params)", 10, 5)});
  for (const int width : {30, 60, 100}) {
    std::vector<std::string> rows;
    for (const std::string& l : lines_of(diff_traces(a, b, "a", "b", "", OutputFormat::Text, width))) {
      if (l.rfind("  - ", 0) == 0 || l.rfind("  + ", 0) == 0) rows.push_back(l.substr(4, static_cast<size_t>(width)));
    }
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_NE(rows[0], rows[1]) << "width " << width;
    EXPECT_NE(rows[0].find("variant_A"), std::string::npos) << rows[0];
  }
}

TEST(SvgLegend, EveryNumberDrawnIsListedAndEveryListedIsDrawn) {
  // 60 ops too narrow for their names: every [k] on a bar has its legend line (there was "and 20 more names").
  std::vector<std::string> events = {event("user_annotation", "ProfilerStep#1", 0, 6000)};
  for (int i = 0; i < 60; ++i) {
    events.push_back(event("cpu_op", "aten::op_" + std::to_string(i) + "_long_name", 10 + i * 99, 95));
  }
  SvgOptions wide;
  wide.width = 4000;
  const std::string svg = trace_svg(TraceIndex(trace_of(events)), wide);
  auto numbers = [&](const std::string& pattern) {
    std::set<std::string> out;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
      out.insert((*it)[1]);
    }
    return out;
  };
  // A bar's label is a line of its own; a legend line starts with its color's swatch.
  const std::set<std::string> drawn = numbers(R"(\n<text class="l" x="[^"]*" y="[^"]*">\[(\d+)\])");
  const std::set<std::string> listed = numbers(R"(height="12"/><text class="l" x="[^"]*" y="[^"]*">\[(\d+)\])");
  EXPECT_EQ(svg.find("more names"), std::string::npos);
  EXPECT_FALSE(drawn.empty());
  EXPECT_EQ(drawn, listed) << svg;
}

TEST(SvgLegend, NamesDropTheirNamespaceBeforeBeingCutAndTotalsCountEveryBar) {
  // The op a chapter is about, on a narrow bar: "[1] gelu_mul", not "ladde..." with no number; its legend line
  // counts all three calls (the wide one, whose label fits, too).
  const Trace t = trace_of({event("user_annotation", "ProfilerStep#1", 0, 1000),
                            event("cpu_op", "ladder::gelu_mul", 10, 80), event("cpu_op", "ladder::gelu_mul", 100, 80),
                            event("cpu_op", "ladder::gelu_mul", 200, 700)});
  const std::string svg = trace_svg(TraceIndex(t), SvgOptions{});
  EXPECT_NE(svg.find(">[1] gelu_mul</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("[1] ladder::gelu_mul \u00d73, "), std::string::npos) << svg;
}

}  // namespace
}  // namespace ladder
