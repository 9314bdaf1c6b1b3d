// `ladder-trace advise` on the committed traces says what each chapter teaches: 01 at --size 64 launch-bound and at
// 4096 compute-bound; 02's graph replay has taken the launches away; 03_simple_mlp's GELU and product as the fusion
// candidate, 03_fused_mlp without it; 04 and 05's op with no elementwise kernel left, PyTorch eager with its two;
// 06 eager's memory held for the backward; 07's exposed all-reduce, its slowest rank and its straggler.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "trace/analyses/advice.h"
#include "trace/analyses/peaks.h"
#include "trace/analyses/ranks_figures.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/advice_view.h"

namespace ladder {
namespace {

const std::string kRef = std::string(LADDER_SOURCE_DIR) + "/traces/reference/h100/";

std::vector<Finding> advice_of(const std::string& name) {
  const Trace t = load_trace(kRef + name);
  const TraceIndex index(t);
  return advise(index, -1, peak_of(t.devices.at(0).name));
}

std::vector<Finding> of_kind(const std::vector<Finding>& all, const std::string& kind) {
  std::vector<Finding> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const Finding& f) { return f.kind == kind; });
  return out;
}

TEST(Advice, Chapter01AtSize64IsLaunchBound) {
  const auto all = advice_of("01_matmul_add_size64.json");
  const auto launch = of_kind(all, "launch-bound");
  ASSERT_EQ(launch.size(), 3u);  // every step
  for (const Finding& f : launch) {
    EXPECT_GT(f.share, 80.0) << f.detail;  // the GPU waited for the host most of the step
    EXPECT_NE(f.rung.find("CUDA Graphs"), std::string::npos);
  }
  EXPECT_TRUE(of_kind(all, "gpu-bound").empty());
  // The step's second, 47.8 us: 43.4 us idle, 40.1 us of it with nothing queued (the breakdown view's figures).
  EXPECT_NEAR(launch[2].figure, 40.1, 0.05);
}

TEST(Advice, Chapter01AtSize4096IsComputeBound) {
  const auto all = advice_of("01_matmul_add_size4096.json");
  const auto gpu = of_kind(all, "gpu-bound");
  ASSERT_EQ(gpu.size(), 3u);
  for (const Finding& f : gpu) {
    EXPECT_GT(f.share, 95.0);
    EXPECT_NE(f.detail.find("sm80_xmma_gemm_f32f32"), std::string::npos) << f.detail;
  }
  EXPECT_TRUE(of_kind(all, "launch-bound").empty());
  EXPECT_TRUE(of_kind(all, "gemm-below-peak").empty());  // 77% of the FP32 peak
}

TEST(Advice, Chapter02GraphTakesTheLaunchesAway) {
  for (const Finding& f : of_kind(advice_of("02_linear.json"), "launch-bound"))
    EXPECT_EQ(f.rung, "01 (launch overhead); 02 (CUDA Graphs)");
  const auto graph = of_kind(advice_of("02_linear_graph.json"), "launch-bound");
  ASSERT_EQ(graph.size(), 3u);  // a 2.5 us kernel cannot fill the step, graph or not
  for (const Finding& f : graph) EXPECT_NE(f.rung.find("already one graph launch"), std::string::npos) << f.rung;
}

TEST(Advice, Chapter03SimpleMlpFusesGeluAndProduct) {
  const auto chains = of_kind(advice_of("03_simple_mlp.json"), "elementwise-chain");
  ASSERT_EQ(chains.size(), 3u);
  for (const Finding& f : chains) {
    EXPECT_NE(f.detail.find("2 memory-bound kernels"), std::string::npos) << f.detail;
    EXPECT_LT(f.detail.find("gelu_vec_kernel"), f.detail.find("mul_vec_kernel")) << f.detail;
    EXPECT_NE(f.detail.find("251.7 MB"), std::string::npos) << f.detail;
    EXPECT_GT(f.share, 25.0);
    EXPECT_EQ(f.rung.rfind("03", 0), 0u);
  }
}

TEST(Advice, Chapter03FusedMlpHasNoChainLeft) {
  const auto all = advice_of("03_fused_mlp.json");
  EXPECT_TRUE(of_kind(all, "elementwise-chain").empty());
  EXPECT_TRUE(of_kind(all, "launch-bound").empty());
}

TEST(Advice, Chapter04And05LeaveNoElementwiseKernel) {
  for (const char* name : {"04_epilogue_mlp.json", "05_ladder.json"}) {
    const auto all = advice_of(name);
    EXPECT_TRUE(of_kind(all, "elementwise-chain").empty()) << name;
    EXPECT_TRUE(of_kind(all, "epilogue-candidate").empty()) << name;
  }
  // PyTorch eager, the same MLP: aten::gelu and aten::mul back to back.
  const auto eager = of_kind(advice_of("05_eager.json"), "elementwise-chain");
  ASSERT_EQ(eager.size(), 3u);
  for (const Finding& f : eager) EXPECT_NE(f.detail.find("aten::gelu"), std::string::npos) << f.detail;
}

TEST(Advice, Chapter06EagerHoldsMemoryForTheBackward) {
  const auto held = of_kind(advice_of("06_train_mlp_eager.json"), "held-for-backward");
  ASSERT_EQ(held.size(), 3u);
  for (const Finding& f : held) {
    // g, gelu(g), u, h: four [8192, 3072] bf16 tensors (201.3 MB), and the forward's output y ([8192, 768], 12.6 MB).
    EXPECT_NEAR(f.figure, 213.9, 0.05) << f.detail;
    EXPECT_NE(f.rung.find("06"), std::string::npos);
  }
  // recompute keeps nothing through the forward.
  EXPECT_TRUE(of_kind(advice_of("06_train_mlp_recompute.json"), "held-for-backward").empty());
}

std::vector<Finding> rank_advice(const std::string& folder) {
  std::vector<RankFigures> figures;
  for (const RankTrace& r : load_ranks(kRef + folder)) figures.push_back(rank_figures(r.trace, r.rank, r.path));
  return advise_ranks(figures, ranks_table(figures, ""));
}

TEST(Advice, Chapter07ExposedAllReduceAndTheSlowestRank) {
  const auto all = rank_advice("07_tp_mlp_tp_b64_s128_d768_h3072_np2");
  const auto exposed = of_kind(all, "exposed-communication");
  ASSERT_EQ(exposed.size(), 6u);  // both ranks, every step: tp overlaps nothing
  for (const Finding& f : exposed) {
    EXPECT_GT(f.share, 10.0);
    EXPECT_NE(f.detail.find(" 0.0% of the communication overlapped"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("1 x ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), std::string::npos) << f.detail;
  }
  const auto slowest = of_kind(all, "slowest-rank");
  ASSERT_FALSE(slowest.empty());
  const auto straggler = of_kind(all, "straggler");
  ASSERT_EQ(straggler.size(), 3u);
  for (const Finding& f : straggler) EXPECT_GT(f.figure, 0.0);
  // Step 3: rank 0 slowest (337.7 us, 53.6 us more), rank 1 the straggler (the ranks view's figures).
  const auto step3 =
      std::find_if(slowest.begin(), slowest.end(), [](const Finding& f) { return f.step_name == "ProfilerStep#3"; });
  ASSERT_NE(step3, slowest.end());
  EXPECT_EQ(step3->rank, 0);
  EXPECT_NEAR(step3->figure, 53.6, 0.05);
  EXPECT_EQ(straggler[1].rank, 1);
}

TEST(Advice, TableAndRecordsHoldEveryFinding) {
  const auto all = advice_of("03_simple_mlp.json");
  const Table t = advice_table(all);
  ASSERT_TRUE(t.rectangular());
  EXPECT_EQ(t.rows(), all.size());
  EXPECT_EQ(t.find("rank"), nullptr);  // one trace: no rank column
  const std::string csv = advice_view(all, OutputFormat::Csv);
  EXPECT_EQ(csv.rfind("step,finding,figure,unit,share (%),detail,rung\n", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(all.size()) + 1);
}

}  // namespace
}  // namespace ladder
