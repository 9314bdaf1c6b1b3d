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

#include "chapter/chapter.h"
#include "kernels.cuh"
#include "gpu/ops.h"
#include "profiler/profiler.h"
#include "chapter/reference.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t size = 64;
  std::string dtype_name_opt = "float32", kernel = "plain";
  bool fused = false, warmup = false;
  CommonOptions common;
  CLI::App app{"01_matmul_add: y = x @ w + b as matmul + add (or one addmm with --fused)"};
  app.add_option("--size", size, "x and w are size x size, b has size elements")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--dtype", dtype_name_opt, "float32 or bf16")
      ->check(CLI::IsMember({"float32", "bf16"}))
      ->capture_default_str();
  app.add_flag("--fused", fused, "one addmm: the bias add moves into the GEMM's epilogue");
  app.add_flag("--warmup", warmup, "run a few forwards before profiling, so one-time costs stay out of the trace");
  app.add_option("--kernel", kernel, "which variant of the add kernel")->capture_default_str();
  add_common_options(app, common, "--warmup-steps");
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    find_variant(ch01::add_variants(), kernel, "add");  // a bad --kernel is a usage error, before any GPU work
    ensure_writable_dir(common.trace_dir);
    const GpuInfo gpu = start_on_gpu();
    const DType dt = parse_dtype(dtype_name_opt);
    const int64_t n = size;
    require_fits({{n, n}, {n, n}, {n}, {n, n}, {n, n}}, dt);

    const auto hx = random_values(n * n, common.seed + 1, dt);
    const auto hw = random_values(n * n, common.seed + 2, dt);
    const auto hb = random_values(n, common.seed + 3, dt);
    const Tensor x = to_device(hx, {n, n}, dt), w = to_device(hw, {n, n}, dt), b = to_device(hb, {n}, dt);
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
      poison(y);
      forward();
      // Rows of a GEMM are independent, so a sample of rows (all of them up to 64) checks a 4096 x 4096 output in
      // about a second; every element must still be finite.
      const CompareResult r = compare_rows(
          to_host(y), n, n,
          [&](int64_t m, double* out) { ref::matmul_row(&hx[m * n], hw.data(), hb.data(), n, n, out); },
          tolerance_for(dt, n));
      require_match(r, fused ? "addmm" : "matmul + add");
      fmt::print("check: {}\n", r.report);
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
