// 02_linear: one nn.Linear, y = x @ W^T + b, in bf16.
//
// What this rung shows: W is stored [out, in] like nn.Linear's weight, so the forward needs W^T. `t` makes that a view
// (strides swapped, nothing copied, no kernel), and `addmm` hands the view to cuBLASLt with transpose flags chosen from
// the strides, with the bias add riding in the GEMM's epilogue. One kernel per forward.
//
// Guess before you look: on the CPU lane, linear_fwd -> linear -> {t, addmm}, with one launch call under addmm. On the
// GPU lane, one GEMM kernel per step, whose name mentions "bias", and nothing under t.
//
// Run:   build/02_linear --batch 1024 --in_dim 32 --out_dim 64   (--in-dim and --out-dim work too)
// Trace: traces/02_linear_batch1024_in32_out64.json (open it in https://ui.perfetto.dev)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "chapter/chapter.h"
#include "chapter/reference.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/values.h"
#include "profiler/profiler.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t batch = 1024, in_dim = 32, out_dim = 64;
  bool no_bias = false;
  CommonOptions common;
  CLI::App app{"02_linear: y = x @ W^T + b with the bias in the GEMM's epilogue"};
  app.add_option("--batch", batch, "rows of x")->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--in-dim", in_dim, "input features")->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--out-dim", out_dim, "output features")->check(int_range(1, kMaxDim))->capture_default_str();
  // The blog's spelling, kept working; hidden from --help (an empty group), where every option uses hyphens.
  app.add_option("--in_dim", in_dim)->check(int_range(1, kMaxDim, "--in_dim"))->group("");
  app.add_option("--out_dim", out_dim)->check(int_range(1, kMaxDim, "--out_dim"))->group("");
  app.add_flag("--no-bias", no_bias, "no bias: linear takes the mm path");
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    const GpuInfo gpu = start_on_gpu(common);
    const DType dt = DType::BF16;
    require_fits({{batch, in_dim}, {out_dim, in_dim}, {out_dim}, {batch, out_dim}}, dt);

    // Random inputs, made on the GPU (any size, in milliseconds); the CPU recomputes the values it needs. W and b
    // get nn.Linear's initialisation range, so outputs stay O(1) whatever in_dim is.
    const float bound = 1.0f / std::sqrt(float(in_dim));
    const uint64_t sx = common.seed + 1, sw = common.seed + 2, sb = common.seed + 3;
    const Tensor x = random_tensor({batch, in_dim}, sx, dt);
    const Tensor W = random_tensor({out_dim, in_dim}, sw, dt, -bound, bound);  // [out, in], like nn.Linear.weight
    const Tensor b = no_bias ? Tensor{} : random_tensor({out_dim}, sb, dt, -bound, bound);
    const Tensor y = empty({batch, out_dim}, dt);

    auto forward = [&] { ops::linear(x, W, no_bias ? nullptr : &b, y); };

    // Correct first: against a float64 CPU reference, every element or (for large shapes) a sample of rows and
    // columns, and every element finite (y starts as NaN, so an unwritten one fails).
    poison(y);
    forward();
    const OutputSample sample = sample_output(batch, out_dim, in_dim, in_dim);
    std::vector<std::vector<float>> W_rows;  // the rows of W the sampled columns need
    for (int64_t n : sample.cols) {
      W_rows.emplace_back(in_dim);
      for (int64_t k = 0; k < in_dim; ++k) W_rows.back()[k] = random_value(sw, n * in_dim + k, dt, -bound, bound);
    }
    std::vector<float> x_row(in_dim);
    const std::string check = check_output(
        y, batch, out_dim, sample,
        [&](int64_t m, const std::vector<int64_t>& cols, double* ref) {
          for (int64_t k = 0; k < in_dim; ++k) x_row[k] = random_value(sx, m * in_dim + k, dt);
          for (size_t c = 0; c < cols.size(); ++c) {
            const float bias = no_bias ? 0.0f : random_value(sb, cols[c], dt, -bound, bound);
            ref::linear_row(x_row.data(), W_rows[c].data(), no_bias ? nullptr : &bias, in_dim, 1, &ref[c]);
          }
        },
        tolerance_for(dt, in_dim), "linear");
    fmt::print("check: {}; cuBLAS flags for x @ W.t(): {}\n", check, ops::gemm_flags(x, W.t()));

    if (common.check_only) return 0;

    const Trace trace = profile_forward(common, "linear_fwd", forward);
    report(trace, gpu, common, "linear_fwd", forward,
           trace_path(common, "02_linear",
                      fmt::format("batch{}_in{}_out{}{}", batch, in_dim, out_dim, no_bias ? "_nobias" : "")));
    return 0;
  });
}
