// 03_fused_mlp: the GeGLU MLP of 03_simple_mlp with gelu and mul fused into one hand-written kernel.
//
// What this rung shows: four kernels per step instead of five. gelu_mul reads g and u once and writes gelu(g) * u
// once; the intermediate gelu(g) lives in registers and never makes the round trip through HBM that 03_simple_mlp's
// gelu and mul pay for. The numbers do not change: the fused kernel rounds gelu(g) to bf16 before the multiply, as the
// eager pair does, so both chapters print the same output checksum for the same seed and shapes.
//
// Guess before you look: how much shorter is a step, and which of the old kernels' bytes are gone?
//
// Run:   build/03_fused_mlp --batch 64 --seq 128 --dim 768 --hidden 3072
// Trace: traces/03_fused_mlp_b64_s128_d768_h3072.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <tuple>

#include "03_fused_mlp/kernels.cuh"
#include "chapter/chapter.h"
#include "chapter/reference.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/values.h"
#include "work/ladder_ops.h"
#include "profiler/profiler.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string kernel = "vec";
  CommonOptions common;
  CLI::App app{"03_fused_mlp: the GeGLU MLP with a fused gelu*mul kernel, four kernels per forward"};
  for (auto [name, var, what] : {std::tuple{"--batch", &batch, "sequences in x"},
                                 {"--seq", &seq, "tokens per sequence (x has batch x seq rows)"},
                                 {"--dim", &dim, "model width: features of x and y"},
                                 {"--hidden", &hidden, "hidden width of the MLP: features of gate(x) and up(x)"}})
    app.add_option(name, *var, what)->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--kernel", kernel, "variant of the gelu_mul kernel: " + variant_names(ch03::gelu_mul_variants()))
      ->capture_default_str();
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    ladder::register_ladder_ops_work();  // the report prints ladder::gelu_mul's bytes (work/ladder_ops.h)
    ch03::find_gelu_mul_variant(kernel);  // a bad --kernel is a usage error, before any GPU work
    const GpuInfo gpu = start_on_gpu(common);
    const DType dt = DType::BF16;
    const int64_t rows = batch * seq;
    require_fits({{rows, dim},
                  {hidden, dim},
                  {hidden, dim},
                  {dim, hidden},
                  {rows, hidden},
                  {rows, hidden},
                  {rows, hidden},
                  {rows, dim}},
                 dt);

    // Random inputs made on the GPU; the CPU recomputes the values it needs (random_value).
    const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
    const uint64_t sx = common.seed + 1, sgate = common.seed + 2, sup = common.seed + 3, sdown = common.seed + 4;
    const Tensor x = random_tensor({batch, seq, dim}, sx, dt);
    const Tensor gate = random_tensor({hidden, dim}, sgate, dt, -bd, bd);  // nn.Linear(dim, hidden).weight
    const Tensor up = random_tensor({hidden, dim}, sup, dt, -bd, bd);
    const Tensor down = random_tensor({dim, hidden}, sdown, dt, -bh, bh);  // nn.Linear(hidden, dim).weight
    const Tensor g = empty({batch, seq, hidden}, dt), u = empty({batch, seq, hidden}, dt);
    const Tensor m = empty({batch, seq, hidden}, dt);
    const Tensor y = empty({batch, seq, dim}, dt);

    auto forward = [&] {
      ops::linear(x, gate, nullptr, g);
      ops::linear(x, up, nullptr, u);
      ch03::gelu_mul(g, u, m, kernel);  // gelu(g) * u: gelu(g) stays in registers
      ops::linear(m, down, nullptr, y);
    };

    // Every tensor the forward writes starts as NaN, so an element any kernel leaves unwritten poisons what follows
    // and fails the check below.
    for (const Tensor* t : {&g, &u, &m, &y}) poison(*t);
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
    fmt::print("check: {}\noutput checksum: {:#018x}\n", check, checksum(y));

    if (common.check_only) return 0;

    const Trace trace = profile_forward(common, "mlp_fwd", forward);
    report(trace, gpu, common, "mlp_fwd", forward,
           trace_path(common, "03_fused_mlp", fmt::format("b{}_s{}_d{}_h{}", batch, seq, dim, hidden)));
    return 0;
  });
}
