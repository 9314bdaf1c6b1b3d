// 04_epilogue_mlp: the GeGLU MLP of 03_fused_mlp with gate, up and gelu_mul fused into ONE hand-written GEMM.
//
// What this rung shows: two kernels per step instead of four. One GEMM computes g = x @ W_gate^T and u = x @ W_up^T
// for the same output tile at once, and its epilogue, still holding both in registers, writes only
// m = gelu(g) * u: g and u never go to HBM, and nothing reads them back. `down` stays on cuBLASLt as in 03. The
// numbers do not change: the epilogue rounds g, u and gelu(g) to bf16 where 03's kernels store them, so both chapters
// print the same output checksum for the same seed and shapes.
//
// Guess before you look: 03_fused's gate and up GEMMs already run near the tensor cores' peak. How much of a step can
// a GEMM that also does the elementwise work save, and what does its epilogue cost?
//
// Runs on every GPU from the A100 (sm_80) on: the Hopper variants (wgmma and TMA, "fast" by default) on an sm_90 GPU,
// the portable one (mma.sync) on every other. --kernel picks another variant.
// Run:   build/04_epilogue_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
// Trace: traces/04_epilogue_mlp_b64_s128_d768_h3072.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <tuple>

#include "04_epilogue_mlp/kernels.cuh"
#include "chapter/chapter.h"
#include "chapter/reference.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/values.h"
#include "profiler/profiler.h"
#include "work/ladder_ops.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string kernel;  // "" = the GPU's default variant
  CommonOptions common;
  CLI::App app{"04_epilogue_mlp: the GeGLU MLP with gate, up and gelu*mul in one GEMM, two kernels per forward"};
  for (auto [name, var, what] : {std::tuple{"--batch", &batch, "sequences in x"},
                                 {"--seq", &seq, "tokens per sequence (x has batch x seq rows)"},
                                 {"--dim", &dim, "model width: features of x and y (a multiple of 8)"},
                                 {"--hidden", &hidden, "hidden width of the MLP: features of m (a multiple of 8)"}})
    app.add_option(name, *var, what)->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--kernel", kernel,
                 "variant of the geglu_gemm kernel (default: fast on an sm_90 GPU, portable on every other): " +
                     variant_names(ch04::geglu_gemm_variants()));
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    ladder::register_ladder_ops_work();  // the report prints ladder::geglu_gemm's work (work/ladder_ops.h)
    // A bad --kernel or a shape the kernels cannot tile is a usage error, before any GPU work.
    if (!kernel.empty()) ch04::find_geglu_gemm_variant(kernel);
    if (const std::string rule = ch04::geglu_gemm_shape_rule(dim, hidden); !rule.empty()) throw UsageError(rule);
    const GpuInfo gpu = start_on_gpu(common);
    if (kernel.empty()) kernel = ch04::geglu_gemm_default_variant(gpu.major, gpu.minor);
    if (const std::string why = ch04::geglu_gemm_cannot_run(kernel, gpu.major, gpu.minor); !why.empty())
      throw UsageError(why);
    fmt::print("geglu_gemm variant: {}\n", kernel);
    const DType dt = DType::BF16;
    const int64_t rows = batch * seq;
    require_fits({{rows, dim}, {hidden, dim}, {hidden, dim}, {dim, hidden}, {rows, hidden}, {rows, dim}}, dt);

    // Random inputs made on the GPU; the CPU recomputes the values it needs (random_value). Same seeds as 03.
    const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
    const uint64_t sx = common.seed + 1, sgate = common.seed + 2, sup = common.seed + 3, sdown = common.seed + 4;
    const Tensor x = random_tensor({batch, seq, dim}, sx, dt);
    const Tensor gate = random_tensor({hidden, dim}, sgate, dt, -bd, bd);  // nn.Linear(dim, hidden).weight
    const Tensor up = random_tensor({hidden, dim}, sup, dt, -bd, bd);
    const Tensor down = random_tensor({dim, hidden}, sdown, dt, -bh, bh);  // nn.Linear(hidden, dim).weight
    const Tensor m = empty({batch, seq, hidden}, dt);                      // no g, no u: they stay in registers
    const Tensor y = empty({batch, seq, dim}, dt);

    auto forward = [&] {
      ch04::geglu_gemm(x, gate, up, m, kernel);  // gelu(x @ gate^T) * (x @ up^T): one kernel
      ops::linear(m, down, nullptr, y);
    };

    // Every tensor the forward writes starts as NaN, so an element any kernel leaves unwritten poisons what follows
    // and fails the check below.
    for (const Tensor* t : {&m, &y}) poison(*t);
    forward();
    // A sample of rows (each needs all of gate and up: 3 x hidden x dim multiply-adds), every element finite.
    const auto hgate = random_values(hidden * dim, sgate, dt, -bd, bd);
    const auto hup = random_values(hidden * dim, sup, dt, -bd, bd);
    const auto hdown = random_values(dim * hidden, sdown, dt, -bh, bh);
    std::vector<float> x_row(dim);
    std::vector<double> y_row(dim);
    const std::string check = check_output(
        y, rows, dim, sample_output(rows, dim, 3.0 * hidden * dim, 0, 1e9),
        [&](int64_t r, const std::vector<int64_t>& cols, double* ref) {
          for (int64_t k = 0; k < dim; ++k) x_row[k] = random_value(sx, r * dim + k, dt);
          ref::geglu_mlp_row(x_row.data(), hgate.data(), hup.data(), hdown.data(), dim, hidden, y_row.data());
          for (size_t c = 0; c < cols.size(); ++c) ref[c] = y_row[cols[c]];
        },
        tolerance_for(dt, hidden), "mlp");
    // The same checksum as 03_fused_mlp's for the same seed and shapes (a ctest compares them): same bits.
    fmt::print("check: {}\noutput checksum: {:#018x}\n", check, checksum(y));

    if (common.check_only) return 0;

    const Trace trace = profile_forward(common, "mlp_fwd", forward);
    report(trace, gpu, common, "mlp_fwd", forward,
           trace_path(common, "04_epilogue_mlp", fmt::format("b{}_s{}_d{}_h{}", batch, seq, dim, hidden)));
    return 0;
  });
}
