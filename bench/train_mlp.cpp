// bench_train_mlp: is chapter 06's backward GEMM with the gelu*mul backward in its epilogue (dgated_gemm) as fast as
// the plain GEMM it extends, and faster than the two kernels it replaces?
//
// dh = dy @ W_down, then dg, du (and h, recomputed) from dh, g and u, timed four ways at the blog's shape (8192 rows,
// dim 768, hidden 3072), at 16384 rows, at dim 1536 / hidden 6144 (where launch_dgated_gemm first takes the wide
// kernel), at dim 2048 / hidden 8192 and at dim 4096 / hidden 11008 (a Llama-7B-sized MLP):
//   (a) cuBLASLt's dh = dy @ W_down alone, what `fused` and `eager` run first (timed first and again last: its spread
//       between the two is the run-to-run noise);
//   (b) the fused mode's pair: (a), then gelu_mul_backward (reads dh, g, u; writes dg, du);
//   (c) dgated_gemm's kernel alone: the one launch_dgated_gemm picks for the shape, then each of its two kernels by
//       name ("narrow", 128 x 128 tiles, and "wide", 128 x 256: dgated_gemm.h says which it picks when); and (d) the
//       op as the epilogue mode calls it (its checks, then the kernel).
// (c) moves more bytes than (a) can: it reads g and u and writes dg, du and h, 5 [M, hidden] tensors where (a) writes
// one. So "x (a)" is printed beside "GB/s", the bytes of each op's inputs read once and outputs written once per
// second of its time. Each is timed as bench_epilogue_mlp times (ladder::GpuTimer: an L2 flush before every run, CUDA
// events around the op, 5 warm-up runs, the median and minimum of --iters runs), each op after --rest-ms with the GPU
// idle. An H200 lowers its clock under these kernels' load, and at dim 4096 the rows timed right after the longest
// ones came out up to 15% slower than the same kernel timed after a pause; with the rest, every row starts at the
// clock of a rested GPU. --load-ms instead runs each op back to back that long first, to time it at the clock the GPU
// holds under sustained load, as in a long training run (bench/results/2026-11-29_h200_bench_rest_or_load). Before
// timing, each (c) kernel's dg and du are compared with (b)'s bit for bit; more than 1 ulp apart anywhere is a wrong
// kernel and stops the run (exit 1). (One ulp can happen: (c) rounds its own float32 sum of dh, whose order differs
// from cuBLAS's.) Its h must be exactly the bits 03's gelu_mul makes from the same g and u (it does not depend on dh),
// else the run stops too.
//
// The floor under (c), printed after each shape's rows: (c) must move its bytes (dy, W_down, g and u read, dg, du
// and h written) and do (a)'s arithmetic. The first takes at least as long as a device-to-device copy of as many bytes
// (timed here, in the same run: bench/copy_rate.h), the second at least as long as (a) itself (the faster of its two
// rows); the two can overlap, so the floor is the larger, and "x floor" says how far (c) is above it.
//
// Needs an sm_90 GPU (dgated_gemm is wgmma and TMA). Run: build/bench/bench_train_mlp [--iters 100] [--rest-ms 300]
// [--load-ms 0]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"
#include "bench/bits.h"
#include "bench/copy_rate.h"
#include "bench/rest.h"
#include "chapter/chapter.h"
#include "chapter/cli.h"
#include "chapter/gpu_timer.h"
#include "cuda/check.h"
#include "gpu/info.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/values.h"

namespace {

using bf16 = __nv_bfloat16;
using ladder::DType;
using ladder::Tensor;

constexpr int kWrongUlps = 1;

Tensor columns(const Tensor& t, int64_t first, int64_t count) {  // [rows, count] view of a contiguous [rows, n]
  Tensor v = ladder::view_of(t.ptr<bf16>() + first, DType::BF16, {t.size(0), count});
  v.strides = {t.size(1), 1};
  return v;
}

// dgated_gemm's kernels: the one launch_dgated_gemm picks, then each by name. Only in a build with sm_90a code
// (without it the op has refused already).
std::vector<std::pair<std::string, ch06::DgatedGemmLauncher*>> dgated_kernels() {
#if LADDER_HAVE_SM90A
  return {{"(c) dgated_gemm kernel", ch06::launch_dgated_gemm},
          {"    (c) narrow, 128 x 128 tiles", ch06::launch_dgated_gemm_narrow},
          {"    (c) wide, 128 x 256 tiles", ch06::launch_dgated_gemm_wide}};
#else
  return {};
#endif
}

int bench(int argc, const char* const* argv) {
  CLI::App app{"Times chapter 06's dgated_gemm against cuBLASLt's dh GEMM alone and with gelu_mul_backward after it."};
  int iters = 100;
  benchmarks::Rest rest;
  app.add_option("--iters", iters, "timed runs per op; the median is reported")->check(CLI::Range(1, 100000));
  rest.add_options(app);
  if (const int code = ladder::parse_options(app, argc, argv); code >= 0) return code;

  const ladder::GpuInfo gpu = ladder::start_benchmark();  // or one line pointing at bench/results/
  if (const std::string why = ch06::dgated_gemm_cannot_run(gpu.major, gpu.minor, 768, 3072); !why.empty())
    throw ladder::UsageError("dgated_gemm does not run here: " + why);
  const ladder::GpuTimer timer;
  fmt::print("GPU {}: {} (sm_{}{}, {} SMs), {}\n", gpu.id, gpu.name, gpu.major, gpu.minor, gpu.sms,
             timer.flush_words());
  fmt::print("median of {} runs {} and {} warm-up runs; x (a) = median / the first (a)'s\n\n", iters, rest.words(),
             ladder::GpuTimer::kWarmupRuns);
  fmt::print("{:<18} {:<34} {:>10} {:>9} {:>8} {:>7} {:>11} {:>8}\n", "M,dim,hidden", "op", "median us", "min us",
             "GB/s", "x (a)", "identical %", "max ulp");

  struct Shape {
    int64_t M, dim, hidden;
  };
  for (const Shape& s :
       {Shape{8192, 768, 3072}, {16384, 768, 3072}, {8192, 1536, 6144}, {8192, 2048, 8192}, {8192, 4096, 11008}}) {
    const DType dt = DType::BF16;
    const float bound = 1.0f / std::sqrt(float(s.hidden));
    const Tensor dy = ladder::random_tensor({s.M, s.dim}, 1, dt);
    const Tensor wd = ladder::random_tensor({s.dim, s.hidden}, 2, dt, -bound, bound);
    const Tensor g = ladder::random_tensor({s.M, s.hidden}, 3, dt, -3.0f, 3.0f);
    const Tensor u = ladder::random_tensor({s.M, s.hidden}, 4, dt, -3.0f, 3.0f);
    const Tensor dh = ladder::empty({s.M, s.hidden}, dt), h = ladder::empty({s.M, s.hidden}, dt);
    const Tensor h_ref = ladder::empty({s.M, s.hidden}, dt);
    const Tensor dgu_ref = ladder::empty({s.M, 2 * s.hidden}, dt), dgu = ladder::empty({s.M, 2 * s.hidden}, dt);
    const std::string shape = fmt::format("{},{},{}", s.M, s.dim, s.hidden);
    const double mh = 2.0 * s.M * s.hidden;  // bytes of one [M, hidden] bf16 tensor
    const double gemm_bytes = 2.0 * (s.M * s.dim + s.dim * s.hidden) + mh;

    const auto plain = [&] { ladder::ops::mm(dy, wd, dh); };
    const auto backward = [&] {
      ch06::gelu_mul_backward(dh, g, u, columns(dgu_ref, 0, s.hidden), columns(dgu_ref, s.hidden, s.hidden));
    };
    const auto fused = [&] {
      plain();
      backward();
    };
    const auto op = [&] {
      ch06::dgated_gemm(dy, wd, g, u, columns(dgu, 0, s.hidden), columns(dgu, s.hidden, s.hidden), h);
    };
    const auto kernel = [&](ch06::DgatedGemmLauncher* launch) {
      return [&, launch] {
        launch(dy.ptr<bf16>(), wd.ptr<bf16>(), g.ptr<bf16>(), u.ptr<bf16>(), s.hidden, dgu.ptr<bf16>(),
               dgu.ptr<bf16>() + s.hidden, 2 * s.hidden, h.ptr<bf16>(), s.M, s.dim, s.hidden, 0);
      };
    };
    // What `run` wrote into dgu and h, against the fused path's dg and du and gelu_mul's h (a wrong kernel stops the
    // run). The printed share and ulps are dg and du's; h has no rounding-order excuse, so it must match exactly.
    const auto check_bits = [&](const std::string& what, const std::function<void()>& run) {
      ladder::poison(dgu);
      ladder::poison(h);
      run();
      CUDA_CHECK(cudaDeviceSynchronize());
      const benchmarks::BitStats b = benchmarks::compare_bits(benchmarks::bits_of(dgu), benchmarks::bits_of(dgu_ref));
      if (b.max_ulps > kWrongUlps)
        throw ladder::Error(fmt::format("{} at {}: dg or du {} ulps from the fused path's; not timing a wrong kernel",
                                        what, shape, b.max_ulps));
      if (benchmarks::bits_of(h) != benchmarks::bits_of(h_ref))
        throw ladder::Error(fmt::format("{} at {}: h differs from 03's gelu_mul's bits; not timing a wrong kernel",
                                        what, shape));
      return fmt::format("{:>11.4f} {:>8}", 100.0 * b.identical, b.max_ulps);
    };
    fused();
    ch03::gelu_mul(g, u, h_ref);
    const std::string bits = check_bits("dgated_gemm", op);

    double plain_us = 0;
    auto print_row = [&](const std::string& name, const ladder::GpuTiming& t, double bytes, const std::string& cmp) {
      if (plain_us == 0) plain_us = t.median_us();
      fmt::print("{:<18} {:<34} {:>10.1f} {:>9.1f} {:>8.0f} {:>7.3f} {}\n", shape, name, t.median_us(), t.min_us(),
                 bytes / (t.median_us() * 1e3), t.median_us() / plain_us, cmp);
      return t.median_us();
    };
    auto row = [&](const std::string& name, const std::function<void()>& f, double bytes, const std::string& cmp) {
      rest.before(f);
      return print_row(name, timer.time(f, iters, 0), bytes, cmp);  // exactly --iters runs
    };
    const double kernel_bytes = gemm_bytes + 4 * mh;  // dy, W_down, g, u read; dg, du, h written
    const double a_us = row("(a) cublasLt dh = dy @ W_down", plain, gemm_bytes, "");
    row("gelu_mul_backward alone", backward, 5 * mh, "");
    row("(b) (a) + gelu_mul_backward", fused, gemm_bytes + 5 * mh, fmt::format("{:>11} {:>8}", "(ref)", "(ref)"));
    double c_us = 0;
    for (const auto& [name, launch] : dgated_kernels()) {
      const double us = row(name, kernel(launch), kernel_bytes, check_bits(name, kernel(launch)));
      if (c_us == 0) c_us = us;
    }
    row("(d) dgated_gemm op", op, kernel_bytes, bits);
    rest.rest();  // the copy rests as the others do, but is not loaded first
    const double copy_us =
        print_row("copy of (c)'s bytes", benchmarks::copy_times(timer, iters, int64_t(kernel_bytes)), kernel_bytes, "");
    const double a_again_us = row("(a) again", plain, gemm_bytes, "");
    // The faster of the two (a) rows: where the GEMM's clock wandered between them (dim 4096), the slower one would
    // set a floor the kernel can beat.
    const double floor_us = std::max(copy_us, std::min(a_us, a_again_us));
    fmt::print("{:<18} {:<34} {:>10.1f} {:>29} {:.3f} x floor\n", shape, "floor: max(copy, faster (a)); (c) is", floor_us,
               "", c_us / floor_us);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ladder::run_main([&] { return bench(argc, argv); });
}
