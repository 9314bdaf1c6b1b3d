// 02_linear: one nn.Linear, y = x @ W^T + b, in bf16.
//
// What this rung shows: W is stored [out, in] like nn.Linear's weight, so the forward needs W^T. `t` makes that a view
// (strides swapped, nothing copied, no kernel), and `addmm` hands the view to cuBLASLt with transpose flags chosen from
// the strides, with the bias add riding in the GEMM's epilogue. One kernel per forward.
//
// Guess before you look: on the CPU lane, linear_fwd -> linear -> {t, addmm}, with one launch call under addmm. On the
// GPU lane, one GEMM kernel per step, whose name mentions "bias", and nothing under t.
//
// Run:   build/02_linear --batch 1024 --in_dim 32 --out_dim 64
// Trace: traces/02_linear_batch1024_in32_out64.json (open it in https://ui.perfetto.dev)
#include <fmt/format.h>

#include <cmath>

#include "chapter/chapter.h"
#include "gpu/ops.h"
#include "profiler/profiler.h"
#include "chapter/reference.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t batch = 1024, in_dim = 32, out_dim = 64;
  bool no_bias = false;
  CommonOptions common;
  CLI::App app{"02_linear: y = x @ W^T + b with the bias in the GEMM's epilogue"};
  app.add_option("--batch", batch, "rows of x")->check(CLI::Range(int64_t{1}, int64_t{1} << 31))->capture_default_str();
  app.add_option("--in_dim", in_dim, "input features")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  app.add_option("--out_dim", out_dim, "output features")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  app.add_flag("--no-bias", no_bias, "no bias: linear takes the mm path");
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    ensure_writable_dir(common.trace_dir);
    const GpuInfo gpu = start_on_gpu();
    const DType dt = DType::BF16;
    require_fits({{batch, in_dim}, {out_dim, in_dim}, {out_dim}, {batch, out_dim}}, dt);

    // nn.Linear's initialisation range, so outputs stay O(1) whatever in_dim is.
    const float bound = 1.0f / std::sqrt(float(in_dim));
    const auto hx = random_values(batch * in_dim, common.seed + 1, dt);
    const auto hw = random_values(out_dim * in_dim, common.seed + 2, dt, -bound, bound);
    const auto hb = no_bias ? std::vector<float>{} : random_values(out_dim, common.seed + 3, dt, -bound, bound);
    const Tensor x = to_device(hx, {batch, in_dim}, dt);
    const Tensor W = to_device(hw, {out_dim, in_dim}, dt);  // [out, in], like nn.Linear.weight
    const Tensor b = no_bias ? Tensor{} : to_device(hb, {out_dim}, dt);
    const Tensor y = empty({batch, out_dim}, dt);

    auto forward = [&] { ops::linear(x, W, no_bias ? nullptr : &b, y); };

    // Correct first: every element against a float64 CPU reference (y starts as NaN, so an unwritten one fails).
    poison(y);
    forward();
    const CompareResult check = compare_rows(
        to_host(y), batch, out_dim,
        [&](int64_t m, double* out) {
          ref::linear_row(&hx[m * in_dim], hw.data(), no_bias ? nullptr : hb.data(), in_dim, out_dim, out);
        },
        tolerance_for(dt, in_dim), /*max_rows=*/1024);
    require_match(check, "linear");
    fmt::print("check: {}; cuBLAS flags for x @ W.t(): {}\n", check.report, ops::gemm_flags(x, W.t()));

    if (common.check_only) return 0;

    const Trace trace = profile_forward(common, "linear_fwd", forward);
    report(trace, gpu, common, "linear_fwd", forward,
           trace_path(common, "02_linear",
                      fmt::format("batch{}_in{}_out{}{}", batch, in_dim, out_dim, no_bias ? "_nobias" : "")));
    return 0;
  });
}
