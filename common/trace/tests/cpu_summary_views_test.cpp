// The summary views (ladder-trace kernels and breakdown) on committed traces: our H100 reference traces, the traces
// PyTorch 2.11 wrote on an H100 (tests/data/torch211, torch211_user), and small traces built here where a property
// needs one (streams that overlap: the committed two-stream traces barely do).
#include <gtest/gtest.h>

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "trace/analyses/peaks.h"
#include "trace/analyses/work.h"
#include "trace/model/json_read.h"
#include "trace/renderers/breakdown_view.h"
#include "trace/renderers/kernels_view.h"

using namespace ladder;

namespace {
const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";
const std::string kData = std::string(LADDER_TEST_DATA) + "/";

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The figures of a table line: what follows its "(op)" label, spaces squeezed.
std::string figures(const std::string& line) {
  const size_t at = line.rfind(") ");
  std::istringstream in(line.substr(at + 1));
  std::string w, out;
  while (in >> w) out += (out.empty() ? "" : " ") + w;
  return out;
}

Event gpu(Cat cat, const std::string& name, int64_t stream, int64_t ts, int64_t dur) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 0;
  e.tid = stream;
  e.gpu.stream = static_cast<int>(stream);
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}
Event host(Cat cat, const std::string& name, int64_t ts, int64_t dur) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 1;
  e.tid = 1;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}
}  // namespace

// The chapter's kernel table is this view: fed the ceilings 03_fused_mlp printed (in its committed .txt), the view of
// the committed trace's last step gives the same GB/s, % copy, TFLOP/s and % GEMM on every row.
TEST(KernelsView, IsTheChaptersTable) {
  register_op_work("ladder::gelu_mul", elementwise_work);
  std::ifstream txt(kRef + "03_fused_mlp.txt");
  std::vector<std::string> want;
  bool in = false;
  for (std::string line; std::getline(txt, line);) {
    if (line.rfind("  kernel (op)", 0) == 0) {
      in = true;
    } else if (in && (line.empty() || line.rfind("  [", 0) == 0)) {  // the end, or the footnotes below the rows
      break;
    } else if (in) {
      want.push_back(line);
    }
  }
  ASSERT_EQ(want.size(), 6u);
  const Trace t = load_trace(kRef + "03_fused_mlp.json");
  const TraceIndex index(t);
  KernelViewOptions opt;
  opt.step = static_cast<int>(index.steps().size()) - 1;
  opt.all = opt.compact = true;
  opt.peak = Peak{780.1, 2927, "measured", ""};  // the .txt: "a 256 MiB device-to-device copy at 2927 GB/s", "780.1 TFLOP/s"
  opt.gbps_peak_label = "% copy";
  opt.tflops_peak_label = "% GEMM";
  opt.width = 110;
  const auto got = lines_of(kernels_view(index, opt));
  ASSERT_GE(got.size(), 7u);
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string g = figures(got[i + 1]), w = figures(want[i]);
    if (i == 0 || i == 2) continue;  // the memsets: "0" then, their bytes per second now; no % either way
    EXPECT_EQ(g, w) << got[i + 1] << "\n" << want[i];  // footnote marks ("-[2]") included: the chapter prints them too
  }
}

TEST(KernelsView, GroupsAndAccountsForEveryActivity) {
  const Trace t = load_trace(kData + "torch211/transformer_fwd_bwd.json");
  const TraceIndex index(t);
  KernelViewOptions opt;
  opt.format = OutputFormat::Csv;
  const auto rows = lines_of(kernels_view(index, opt));
  ASSERT_GT(rows.size(), 10u);
  int64_t activities = 0, calls = 0;
  for (const Event& e : t.events) activities += is_gpu_activity(e.cat);
  double pct = 0;
  // Names hold commas inside their quotes.
  auto cells = [](const std::string& r) {
    std::vector<std::string> c;
    std::string cell;
    bool q = false;
    for (char ch : r + ",") {
      if (ch == '"') q = !q;
      else if (ch == ',' && !q) c.push_back(cell), cell.clear();
      else cell += ch;
    }
    return c;
  };
  const std::vector<std::string> head = cells(rows[0]);
  const size_t calls_at = std::find(head.begin(), head.end(), "calls") - head.begin();
  const size_t pct_at = std::find(head.begin(), head.end(), "gpu_pct") - head.begin();
  ASSERT_LT(pct_at, head.size());
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> c = cells(rows[i]);
    calls += std::stoll(c[calls_at]);
    pct += std::stod(c[pct_at]);
  }
  EXPECT_EQ(calls, activities);
  EXPECT_NEAR(pct, 100.0, 0.01 * static_cast<double>(rows.size()));
  // Text: a footnote for every mark, the datasheet-free header when no peak is given.
  opt.format = OutputFormat::Text;
  const std::string text = kernels_view(index, opt);
  EXPECT_NE(text.find("[3] its op launched more than one kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("peak: none"), std::string::npos) << text;
}

TEST(KernelsView, TensorCoreRuleAndPeaks) {
  EXPECT_TRUE(uses_tensor_cores("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"));
  EXPECT_TRUE(uses_tensor_cores("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"));
  EXPECT_TRUE(uses_tensor_cores("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize64x64x16"));
  EXPECT_TRUE(uses_tensor_cores("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"));
  EXPECT_TRUE(uses_tensor_cores("fmha_cutlassF_f32_aligned_64x64_rf_sm80"));
  EXPECT_FALSE(uses_tensor_cores("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma"));
  EXPECT_FALSE(uses_tensor_cores("cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nt_align1>"));
  EXPECT_FALSE(uses_tensor_cores("void at::native::vectorized_elementwise_kernel<4, ...>"));
  EXPECT_EQ(peak_of("NVIDIA H100 80GB HBM3").gpu, "H100 SXM5");
  EXPECT_EQ(peak_of("NVIDIA H100 PCIe").gpu, "H100 PCIe");
  EXPECT_EQ(peak_of("NVIDIA H200").gpu, "H200 SXM");
  EXPECT_EQ(peak_of("NVIDIA A100-SXM4-80GB").gpu, "A100 80GB SXM");
  EXPECT_EQ(peak_of("NVIDIA L40S").gpu, "L40S");  // not L4
  EXPECT_EQ(peak_of("NVIDIA L4").gpu, "L4");
  EXPECT_EQ(peak_of("Tesla T4").tflops, 0);
}

// The parts add up to each step's wall time, on every committed torch trace.
TEST(Breakdown, PartsAddUpToTheStep) {
  for (const std::string f : {"torch211/two_streams.json", "torch211/transformer_fwd_bwd.json",
                              "torch211/cudagraph_mlp.json", "torch211/no_schedule.json"}) {
    const Trace t = load_trace(kData + f);
    const TraceIndex index(t);
    const Timeline line(t);
    for (const auto& s : index.steps()) {
      const TimeBreakdown b = line.over(s.ts_ns, s.end_ns);
      int64_t sum = 0;
      for (int64_t ns : b.ns) sum += ns;
      EXPECT_EQ(sum, s.end_ns - s.ts_ns) << f << " " << s.name;
      EXPECT_LE(b.gpu_busy_ns, b.wall_ns());
      EXPECT_GE(b.gpu_summed_ns, b.gpu_busy_ns);
    }
  }
}

// torch's own trace of two streams that really ran at once (bench/record_torch_user_traces.py, streams, on an H100:
// each stream queues one-block spin kernels, so the other stream's work starts beside them).
TEST(Breakdown, RealStreamsOverlap) {
  const std::string dir = kData + "torch211_user/streams/";
  std::string file;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".gz") file = e.path().string();
  ASSERT_FALSE(file.empty());
  const Trace t = load_trace(file);
  const TraceIndex index(t);
  const Timeline line(t);
  ASSERT_EQ(index.steps().size(), 2u);
  for (const auto& s : index.steps()) {
    const TimeBreakdown b = line.over(s.ts_ns, s.end_ns);
    EXPECT_GT(b.gpu_summed_ns, 3 * b.gpu_busy_ns / 2) << s.name;  // measured 1.82x and 1.85x
    EXPECT_LE(b.gpu_busy_ns, b.wall_ns());
  }
}

// A synthetic step: two streams that overlap, a launch call, an op, a gap. Every figure by hand.
TEST(Breakdown, PriorityAndConcurrency) {
  Trace t;
  t.events.push_back(host(Cat::UserAnnotation, "ProfilerStep#1", 0, 1000));
  t.events.push_back(host(Cat::CpuOp, "aten::mm", 100, 300));             // 100..400
  t.events.push_back(host(Cat::CudaRuntime, "cudaLaunchKernel", 150, 50));  // 150..200
  t.events.push_back(gpu(Cat::Kernel, "k1", 7, 300, 400));                   // 300..700 stream 7
  t.events.push_back(gpu(Cat::Kernel, "k2", 8, 500, 300));                   // 500..800 stream 8
  t.events.push_back(gpu(Cat::GpuMemcpy, "Memcpy DtoD", 9, 750, 100));       // 750..850
  t.events.push_back(gpu(Cat::Kernel, "ncclDevKernel_AllReduce", 9, 900, 50));  // 900..950
  const TraceIndex index(t);
  const TimeBreakdown b = Timeline(t).over(0, 1000);
  EXPECT_EQ(b.ns[int(Part::Kernel)], 500);          // 300..800
  EXPECT_EQ(b.ns[int(Part::Memcpy)], 50);           // 800..850 (750..800 is under a kernel)
  EXPECT_EQ(b.ns[int(Part::Communication)], 50);    // 900..950
  EXPECT_EQ(b.ns[int(Part::Runtime)], 50);          // 150..200
  EXPECT_EQ(b.ns[int(Part::CpuExec)], 150);         // 100..150, 200..300
  EXPECT_EQ(b.ns[int(Part::Other)], 200);           // 0..100, 850..900, 950..1000
  EXPECT_EQ(b.gpu_busy_ns, 600);                    // 300..850, 900..950
  EXPECT_EQ(b.gpu_summed_ns, 400 + 300 + 100 + 50);
  EXPECT_EQ(b.compute_ns, 500);
  const std::string text = breakdown_view(index, -1, OutputFormat::Text);
  EXPECT_NE(text.find("1.42x"), std::string::npos) << text;  // 850 / 600
}
