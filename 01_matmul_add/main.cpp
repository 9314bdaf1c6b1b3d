// 01_matmul_add: y = x @ w + b, the first rung.
//
// What this rung shows: how to read a trace at all. The CPU lane holds ProfilerStep#k, the forward's range, the ops
// (`matmul`, then `add`) and under each op the launch call; the GPU lane holds the kernels, each joined to its launch
// by an arrow; each step ends in a cudaDeviceSynchronize. At --size 64 the kernels take a few microseconds and the GPU
// idles between launches (overhead-bound); at --size 4096 the GEMM takes milliseconds and the CPU waits in the
// synchronize (compute-bound). --fused does it in one addmm: cuBLASLt's BIAS epilogue, the add inside the GEMM.
//
// Guess before you look: how many kernels per step with and without --fused? Which lane has gaps at size 64?
//
// Run:   build/01_matmul_add --size 64 --warmup      (then --size 4096, and each with --fused)
// Trace: traces/01_matmul_add_size64.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "01_matmul_add/kernels.cuh"
#include "chapter/chapter.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/values.h"
#include "profiler/profiler.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t size = 64;
  std::string dtype_name_opt = "float32", kernel = "plain";
  bool fused = false, warmup = false;
  CommonOptions common;
  CLI::App app{"01_matmul_add: y = x @ w + b as matmul + add (or one addmm with --fused)"};
  app.add_option("--size", size, "x and w are size x size, b has size elements")
      ->check(int_range(1, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--dtype", dtype_name_opt, "float32 or bf16")
      ->check(CLI::IsMember({"float32", "bf16"}))
      ->capture_default_str();
  app.add_flag("--fused", fused, "one addmm: the bias add moves into the GEMM's epilogue");
  app.add_flag("--warmup", warmup, "run a few forwards before profiling, so one-time costs stay out of the trace");
  app.add_option("--kernel", kernel, "variant of the add kernel: " + variant_names(ch01::add_variants()))
      ->capture_default_str();
  add_common_options(app, common, "--warmup-steps");
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    find_variant(ch01::add_variants(), kernel, "add");  // a bad --kernel is a usage error, before any GPU work
    const GpuInfo gpu = start_on_gpu(common);
    const DType dt = parse_dtype(dtype_name_opt);
    const int64_t n = size;
    require_fits({{n, n}, {n, n}, {n}, {n, n}, {n, n}}, dt);

    // Random inputs made on the GPU; the CPU recomputes the values it needs (random_value).
    const uint64_t sx = common.seed + 1, sw = common.seed + 2, sb = common.seed + 3;
    const Tensor x = random_tensor({n, n}, sx, dt), w = random_tensor({n, n}, sw, dt), b = random_tensor({n}, sb, dt);
    const Tensor xw = empty({n, n}, dt), y = empty({n, n}, dt);

    auto forward = [&] {
      if (fused) {
        ops::addmm(b, x, w, y);  // one kernel: bias in the epilogue
      } else {
        ops::matmul(x, w, xw);                // cuBLASLt GEMM
        ch01::add(xw, b, y, kernel.c_str());  // our broadcast add
      }
    };
    auto check = [&] {
      poison(xw);
      poison(y);
      forward();
      // Rows and columns of a GEMM are independent, so a sample of both (every element for small sizes) checks a
      // 4096 x 4096 output well within a second; every element must still be finite.
      const OutputSample sample = sample_output(n, n, n, n);
      std::vector<std::vector<float>> w_cols;  // the columns of w the sampled columns need
      for (int64_t j : sample.cols) {
        w_cols.emplace_back(n);
        for (int64_t k = 0; k < n; ++k) w_cols.back()[k] = random_value(sw, k * n + j, dt);
      }
      std::vector<float> x_row(n);
      const std::string r = check_output(
          y, n, n, sample,
          [&](int64_t m, const std::vector<int64_t>& cols, double* ref) {
            for (int64_t k = 0; k < n; ++k) x_row[k] = random_value(sx, m * n + k, dt);
            for (size_t c = 0; c < cols.size(); ++c) {
              const float bias = random_value(sb, cols[c], dt);
              ref::matmul_row(x_row.data(), w_cols[c].data(), &bias, n, 1, &ref[c]);
            }
          },
          tolerance_for(dt, n), fused ? "addmm" : "matmul + add");
      fmt::print("check: {}\n", r);
    };

    // The blog's --warmup: run the forward (and the check) before profiling, so one-time costs (lazy module loading,
    // cuBLASLt's handle and workspace, the first launch of each kernel) are paid before the profiler starts. Without
    // it, the program's first forward is the schedule's first step: untraced with --wait 1, recorded with
    // --wait 0 --warmup-steps 0. The check then runs right after profiling, before anything is written.
    if (warmup || common.check_only) {
      check();
      if (common.check_only) return 0;
      for (int i = 0; i < 3; ++i) forward();
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const Trace trace = profile_forward(common, "matmul_add", forward);
    if (!warmup) check();

    report(trace, gpu, common, "matmul_add", forward,
           trace_path(common, "01_matmul_add",
                      fmt::format("size{}{}{}", n, dt == DType::BF16 ? "_bf16" : "", fused ? "_fused" : "")));
    return 0;
  });
}
