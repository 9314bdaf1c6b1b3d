// bench_epilogue_mlp: is chapter 04's one-GEMM gate/up/gelu*mul (geglu_gemm) as fast as the GEMM alone?
//
// At the blog's shape (8192 rows, dim 768, hidden 3072), at 2048 and 16384 rows, and at dim 4096 / hidden 11008
// (a Llama-7B-sized MLP), it times m = gelu(x @ W_gate^T) * (x @ W_up^T) three ways:
//   (a) every variant of chapter 04's geglu_gemm this GPU runs (04_epilogue_mlp/kernels.cuh), one kernel each;
//   (b) cuBLASLt on the concatenated [2 * hidden, dim] weight with no epilogue: the same FLOPs and nothing else, the
//       ceiling a GEMM that also does the GELU should be measured against (timed first and again last: its spread
//       between the two is the run-to-run noise);
//   (c) chapter 03's way: cuBLASLt gate GEMM, cuBLASLt up GEMM, then 03_fused_mlp's gelu_mul ("vec").
// Each is timed by ladder::GpuTimer (common/chapter/gpu_timer.h), as bench_elementwise times its kernels and the
// chapters their forwards: an L2 flush (a read of twice the L2) before every run, CUDA events around the op alone,
// the runs queued, 5 warm-up runs, the median (and minimum) of --iters runs, each op after the GPU idled --rest-ms
// (bench/rest.h: a GPU lowers its clock under load, and the row after a long one would be timed at that clock).
// TFLOP/s counts the two GEMMs' multiply-adds, 2 * M * dim * 2 * hidden, for every row alike, and "% mma" is that as a
// share of the mma.sync ceiling measured first in the same run (bench/mma_ceiling.cu: register-resident mma.sync
// m16n8k16 on every SM, the instruction the portable variant is built on). Before timing, each variant's output is
// compared with (c) bit for bit: the share of identical outputs and the largest gap in bf16 ulps are printed; a variant
// more than a few ulps off anywhere is a wrong kernel and stops the run (exit 1).
//
// --mma-curve prints only the mma.sync loop's TFLOP/s over warps per SM and independent accumulators, then stops.
//
// Runs on every GPU from sm_80 on (the Hopper variants only on sm_90). Run: build/bench/bench_epilogue_mlp [--iters
// 100] [--rest-ms 300] [--load-ms 0] [--mma-curve]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
#include "04_epilogue_mlp/kernels.cuh"
#include "bench/bits.h"
#include "bench/mma_ceiling.h"
#include "bench/rest.h"
#include "chapter/chapter.h"
#include "chapter/cli.h"
#include "chapter/gpu_timer.h"
#include "cuda/check.h"
#include "gpu/info.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/values.h"

namespace {

using bf16 = __nv_bfloat16;
using ladder::DType;
using ladder::Tensor;

constexpr int kWrongUlps = 4;  // further than this from chapter 03's output anywhere: not a rounding-order difference

using benchmarks::bits_of;
using benchmarks::BitStats;

int bench(int argc, const char* const* argv) {
  CLI::App app{"Times chapter 04's geglu_gemm variants against cuBLASLt alone and against chapter 03's three kernels."};
  int iters = 100;
  bool curve = false;
  benchmarks::Rest rest;
  app.add_option("--iters", iters, "timed runs per op; the median is reported")->check(CLI::Range(1, 100000));
  app.add_flag("--mma-curve", curve,
               "print only the mma.sync loop's TFLOP/s over warps per SM and independent accumulators, then stop");
  rest.add_options(app);
  if (const int code = ladder::parse_options(app, argc, argv); code >= 0) return code;

  const ladder::GpuInfo gpu = ladder::start_benchmark();  // or one line pointing at bench/results/
  if (curve) {
    fmt::print("GPU {}: {} (sm_{}{}, {} SMs); register-resident mma.sync m16n8k16 bf16, median of {} runs\n", gpu.id,
               gpu.name, gpu.major, gpu.minor, gpu.sms, iters);
    fmt::print("{:>12} {:>7} {:>9}\n", "warps/SM", "chains", "TFLOP/s");
    for (const benchmarks::MmaPoint& p : benchmarks::mma_sync_curve(gpu.sms, iters))
      fmt::print("{:>12} {:>7} {:>9.1f}\n", p.warps_per_sm, p.chains, p.tflops);
    return 0;
  }
  std::vector<ch04::GegluGemmVariant> variants;
  for (const ch04::GegluGemmVariant& v : ch04::geglu_gemm_variants()) {
    if (const std::string why = ch04::geglu_gemm_cannot_run(v.name, gpu.major, gpu.minor); why.empty())
      variants.push_back(v);
    else
      fmt::print("not timed: {}\n", why);
  }
  if (variants.empty()) throw ladder::UsageError("this GPU runs none of the geglu_gemm variants (sm_80 or later)");
  const double ceiling = benchmarks::mma_sync_ceiling_tflops(gpu.sms, iters);
  const ladder::GpuTimer timer;
  fmt::print("GPU {}: {} (sm_{}{}, {} SMs), {}\n", gpu.id, gpu.name, gpu.major, gpu.minor, gpu.sms,
             timer.flush_words());
  fmt::print("mma.sync ceiling: {:.1f} TFLOP/s (register-resident mma.sync m16n8k16 bf16 on every SM, median of {})\n",
             ceiling, iters);
  fmt::print("median of {} runs {} and {} warm-up runs; x concat = median / cuBLASLt concat's (first run)\n\n",
             iters, rest.words(), ladder::GpuTimer::kWarmupRuns);
  fmt::print("{:<18} {:<28} {:>10} {:>9} {:>8} {:>6} {:>9} {:>11} {:>8}\n", "M,dim,hidden", "op", "median us", "min us",
             "TFLOP/s", "% mma", "x concat", "identical %", "max ulp");

  struct Shape {
    int64_t M, dim, hidden;
  };
  for (const Shape& s : {Shape{8192, 768, 3072}, {2048, 768, 3072}, {16384, 768, 3072}, {8192, 4096, 11008}}) {
    const DType dt = DType::BF16;
    const float bound = 1.0f / std::sqrt(float(s.dim));  // nn.Linear's init range, as the chapters use
    const Tensor x = ladder::random_tensor({s.M, s.dim}, 1, dt);
    const Tensor w = ladder::random_tensor({2 * s.hidden, s.dim}, 2, dt, -bound, bound);  // [W_gate; W_up]
    const Tensor w_gate = ladder::view_of(w.data, dt, {s.hidden, s.dim});
    const Tensor w_up = ladder::view_of(w.ptr<bf16>() + s.hidden * s.dim, dt, {s.hidden, s.dim});
    const Tensor gu = ladder::empty({s.M, 2 * s.hidden}, dt);  // (b)'s output
    const Tensor g = ladder::empty({s.M, s.hidden}, dt), u = ladder::empty({s.M, s.hidden}, dt);
    const Tensor m_ref = ladder::empty({s.M, s.hidden}, dt), m = ladder::empty({s.M, s.hidden}, dt);
    const double flops = 2.0 * s.M * s.dim * 2.0 * s.hidden;
    const std::string shape = fmt::format("{},{},{}", s.M, s.dim, s.hidden);

    const auto concat = [&] { ladder::ops::linear(x, w, nullptr, gu); };
    const auto eager = [&] {
      ladder::ops::linear(x, w_gate, nullptr, g);
      ladder::ops::linear(x, w_up, nullptr, u);
      ch03::gelu_mul(g, u, m_ref, "vec");
    };
    eager();
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> want = bits_of(m_ref);

    double concat_us = 0;
    auto row = [&](const std::string& op, const std::function<void()>& f, const std::string& bits) {
      rest.before(f);
      const ladder::GpuTiming t = timer.time(f, iters, 0);  // exactly --iters runs
      if (concat_us == 0) concat_us = t.median_us();
      const double tflops = flops / (t.median_us() * 1e6);
      fmt::print("{:<18} {:<28} {:>10.1f} {:>9.1f} {:>8.1f} {:>6.1f} {:>9.3f} {}\n", shape, op, t.median_us(),
                 t.min_us(), tflops, 100.0 * tflops / ceiling, t.median_us() / concat_us, bits);
    };
    row("cublasLt concat (b)", concat, "");
    row("cublasLt g+u+gelu_mul (c)", eager, fmt::format("{:>11} {:>8}", "(ref)", "(ref)"));
    for (const ch04::GegluGemmVariant& v : variants) {
      const auto op = [&, launch = v.launch] {
        launch(x.ptr<bf16>(), w_gate.ptr<bf16>(), w_up.ptr<bf16>(), m.ptr<bf16>(), s.M, s.dim, s.hidden, 0);
      };
      ladder::poison(m);
      op();
      CUDA_CHECK(cudaDeviceSynchronize());
      const BitStats b = benchmarks::compare_bits(bits_of(m), want);
      if (b.max_ulps > kWrongUlps)
        throw ladder::Error(fmt::format("{} at {}: {} ulps from chapter 03's output; not timing a wrong kernel", v.name,
                                        shape, b.max_ulps));
      row(v.name, op, fmt::format("{:>11.4f} {:>8}", 100.0 * b.identical, b.max_ulps));
    }
    row("cublasLt concat (b) again", concat, "");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ladder::run_main([&] { return bench(argc, argv); });
}
