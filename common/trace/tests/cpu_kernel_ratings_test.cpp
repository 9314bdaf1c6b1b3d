// The kernels view's ratings (trace/analyses/kernel_table.h): tensor cores from the launching op's dtype and the
// ladder's own GEMM kernels' names, and no share of a peak above 100% on any committed trace (before: chapter 04's
// wgmma GEMM read "1003.8% of peak, TC no", rated against the CUDA cores' FP32 peak because its name said nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "trace/analyses/kernel_table.h"
#include "trace/analyses/peaks.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/kernels_view.h"

namespace ladder {
namespace {

const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";

struct FrameRow {
  std::string name, tc, note;
  double tflops, tflops_pct, peak, gbps_pct;
};

std::vector<FrameRow> frame_rows(const Trace& t) {
  const TraceIndex index(t);
  const Peak peak = t.devices.empty() ? Peak{} : peak_of(t.devices.front().name);
  const Table f = kernel_frame(kernel_table(index, -1, false), peak);
  std::vector<FrameRow> out;
  for (size_t i = 0; i < f.rows(); ++i) {
    out.push_back({f.find("name")->texts[i], f.find("tensor_cores")->texts[i], f.find("note")->texts[i],
                   f.find("tflops")->floats[i], f.find("tflops_pct")->floats[i], f.find("peak_tflops")->floats[i],
                   f.find("gbps_pct")->floats[i]});
  }
  return out;
}

const FrameRow& row_named(const std::vector<FrameRow>& rows, const std::string& part) {
  for (const FrameRow& r : rows) {
    if (r.name.find(part) != std::string::npos) return r;
  }
  throw std::runtime_error("no kernel named *" + part + "*");
}

// (Its rate, 68.0% of the BF16 peak, needs the ladder's op formulas, which this library does not know: the ctest
// ladder-trace.kernels_ladder_gemm checks it through the command.)
TEST(KernelRatings, LadderGemmsOnTensorCoresAndFp32GemmAgainstFp32) {
  const auto r04 = frame_rows(load_trace(kRef + "04_epilogue_mlp.json"));
  EXPECT_EQ(row_named(r04, "geglu_gemm_fast_kernel").tc, "yes");
  // 06's epilogue GEMMs and the backward one, by their names alone.
  const auto r06 = frame_rows(load_trace(kRef + "06_train_mlp_epilogue.json"));
  EXPECT_EQ(row_named(r06, "geglu_gemm_keep_kernel").tc, "yes");
  EXPECT_EQ(row_named(r06, "dgated_gemm_kernel").tc, "yes");
  EXPECT_EQ(row_named(r06, "transpose_kernel").tc, "no");
  // Chapter 01's float32 GEMM (cuBLAS's FFMA xmma kernel) stays on the CUDA cores, rated against their FP32 peak.
  const auto r01 = frame_rows(load_trace(kRef + "01_matmul_add_size4096.json"));
  const FrameRow& sgemm = row_named(r01, "xmma_gemm_f32f32");
  EXPECT_EQ(sgemm.tc, "no");
  EXPECT_EQ(sgemm.peak, 67);
  EXPECT_GT(sgemm.tflops_pct, 50);
  EXPECT_LE(sgemm.tflops_pct, 100);
}

// 07's NCCL kernel: its own footnote, not "recorded without record_shapes=True" (its trace has shapes).
TEST(KernelRatings, NcclKernelsSayTheyAreCollectives) {
  const auto rows = frame_rows(
      load_trace(kRef + "07_tp_mlp_tp_b64_s128_d768_h3072_np2/rank0.1795711878581913338.pt.trace.json"));
  const FrameRow& nccl = row_named(rows, "ncclDevKernel_AllReduce");
  EXPECT_NE(nccl.note.find("a collective (NCCL)"), std::string::npos) << nccl.note;
  EXPECT_EQ(nccl.note.find("record_shapes"), std::string::npos) << nccl.note;
}

TEST(KernelRatings, TensorCoresFromTheOpsDtypeWhereTheNameDoesNotSay) {
  Event mm;
  mm.cat = Cat::CpuOp;
  mm.name = "aten::mm";
  mm.set_inputs({{256, 512}, {512, 1024}}, {"c10::BFloat16", "c10::BFloat16"});
  EXPECT_TRUE(kernel_uses_tensor_cores("my_gemm_kernel", &mm));
  mm.set_inputs({{256, 512}, {512, 1024}}, {"float", "float"});
  EXPECT_FALSE(kernel_uses_tensor_cores("my_gemm_kernel", &mm));
  EXPECT_FALSE(kernel_uses_tensor_cores("my_gemm_kernel", nullptr));
  // A name that says wins over the dtype: cuBLAS's FFMA GEMM is not on the tensor cores whatever launched it.
  mm.set_inputs({{256, 512}, {512, 1024}}, {"c10::BFloat16", "c10::BFloat16"});
  EXPECT_FALSE(kernel_uses_tensor_cores("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma", &mm));
  // An elementwise op in bf16 does no GEMM: not on the tensor cores.
  Event mul = mm;
  mul.name = "aten::mul";
  mul.set_inputs({{256, 512}, {256, 512}}, {"c10::BFloat16", "c10::BFloat16"});
  EXPECT_FALSE(kernel_uses_tensor_cores("vectorized_elementwise_kernel", &mul));
  EXPECT_TRUE(uses_tensor_cores("ch04::(anonymous namespace)::geglu_gemm_fast_kernel(CUtensorMap_st)"));
  EXPECT_TRUE(uses_tensor_cores("void ch06::(anonymous namespace)::dgated_gemm_kernel(CUtensorMap_st)"));
  EXPECT_FALSE(uses_tensor_cores("void ch03::(anonymous namespace)::gelu_mul_vec_kernel<1, false>(...)"));
  EXPECT_FALSE(uses_tensor_cores("mych04::gemm_kernel"));
}

TEST(KernelRatings, AboveAPeakIsRatedAgainstTheNextOrNotAtAll) {
  const Peak h100 = peak_of("NVIDIA H100 80GB HBM3");
  KernelRow r;
  r.calls = r.rated = 1;
  r.rated_ns = 1000;  // 1 us
  r.flops_known = true;
  r.flops = 100e6;  // 100 TFLOP/s: above the FP32 units' 67, so on the tensor cores
  r.bytes = 1e6;    // 1000 GB/s
  KernelRates k = kernel_rates(r, h100);
  EXPECT_EQ(k.peak_tflops, 989.5);
  EXPECT_NEAR(k.tflops_pct, 100 * 100 / 989.5, 1e-9);
  EXPECT_EQ(k.tflops_note, kWhyAboveFp32);
  EXPECT_NEAR(k.gbps_pct, 100 * 1000 / 3350.0, 1e-9);
  r.flops = 2000e6;  // 2000 TFLOP/s: above every peak of the H100: no %
  r.bytes = 4e6;     // 4000 GB/s: above its memory's
  k = kernel_rates(r, h100);
  EXPECT_TRUE(std::isnan(k.tflops_pct));
  EXPECT_TRUE(std::isnan(k.peak_tflops));
  EXPECT_EQ(k.tflops_note, kWhyAbovePeak);
  EXPECT_TRUE(std::isnan(k.gbps_pct));
  EXPECT_EQ(k.gbps_note, kWhyAboveBandwidth);
  EXPECT_DOUBLE_EQ(k.tflops, 2000);
  // The text view says why with a footnote, and the frame's note too.
  r.name = "k";
  r.cat = "kernel";
  KernelTable table;
  table.rows = {r};
  table.gpu_ns = 1000;
  const Table f = kernel_frame(table, h100);
  EXPECT_NE(f.find("note")->texts[0].find("above the peak TFLOP/s"), std::string::npos) << f.find("note")->texts[0];
}

// Every committed trace, its kernels rated against its GPU's datasheet peaks: no % above 100. (The ladder's own ops
// are rated too through the command: tools/kernels_check.py.)
TEST(KernelRatings, NoShareAbove100OnAnyCommittedTrace) {
  int rows = 0, rated = 0, rated_gbps = 0;
  for (const std::string& root : {kRef, std::string(LADDER_TEST_DATA) + "/"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string p = e.path().string();
      if (!e.is_regular_file() || p.find("hostile") != std::string::npos) continue;
      if (!(p.size() > 5 && (p.substr(p.size() - 5) == ".json" || p.substr(p.size() - 8) == ".json.gz"))) continue;
      if (p.find("hta_figures") != std::string::npos) continue;
      Trace t;
      try {
        t = load_trace(p);
      } catch (const std::exception&) {
        continue;  // not a trace (a figures file)
      }
      for (const FrameRow& r : frame_rows(t)) {
        ++rows;
        rated += !std::isnan(r.tflops_pct);
        rated_gbps += !std::isnan(r.gbps_pct);
        // NaN is "not rated"; anything else must be a number from 0 to 100 (an infinity or a negative one is not).
        for (const double pct : {r.tflops_pct, r.gbps_pct})
          if (!std::isnan(pct)) EXPECT_TRUE(pct >= 0 && pct <= 100) << p << ": " << r.name << " " << pct;
      }
    }
  }
  EXPECT_GT(rows, 300);
  EXPECT_GT(rated, 50);
  EXPECT_GT(rated_gbps, 50);
}

// In a pipe (width 0) every name is whole: two GEMMs of one library differ only at the end.
TEST(KernelRatings, WidthZeroKeepsNamesWhole) {
  const Trace t = load_trace(kRef + "03_fused_mlp.json");
  KernelViewOptions opt;
  opt.width = 0;
  const std::string out = kernels_view(TraceIndex(t), opt);
  EXPECT_NE(out.find("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (aten::mm)"), std::string::npos) << out;
  EXPECT_NE(out.find("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT (aten::mm)"), std::string::npos) << out;
}

}  // namespace
}  // namespace ladder
