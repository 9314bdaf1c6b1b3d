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

#include <cmath>

#include "chapter/chapter.h"
#include "kernels.cuh"
#include "gpu/ops.h"
#include "profiler/profiler.h"
#include "chapter/reference.h"

using namespace ladder;

int main(int argc, char** argv) {
  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string kernel = "vec";
  CommonOptions common;
  CLI::App app{"03_fused_mlp: the GeGLU MLP with a fused gelu*mul kernel, four kernels per forward"};
  for (auto [name, var] : {std::pair{"--batch", &batch}, {"--seq", &seq}, {"--dim", &dim}, {"--hidden", &hidden}})
    app.add_option(name, *var)->check(CLI::Range(int64_t{1}, int64_t{1} << 31))->capture_default_str();
  app.add_option("--kernel", kernel, "variant of the gelu_mul kernel")->capture_default_str();
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    ch03::find_gelu_mul_variant(kernel);  // a bad --kernel is a usage error, before any GPU work
    ensure_writable_dir(common.trace_dir);
    const GpuInfo gpu = start_on_gpu();
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

    const auto hx = random_values(rows * dim, common.seed + 1, dt);
    const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
    const auto hgate = random_values(hidden * dim, common.seed + 2, dt, -bd, bd);
    const auto hup = random_values(hidden * dim, common.seed + 3, dt, -bd, bd);
    const auto hdown = random_values(dim * hidden, common.seed + 4, dt, -bh, bh);
    const Tensor x = to_device(hx, {batch, seq, dim}, dt);
    const Tensor gate = to_device(hgate, {hidden, dim}, dt);  // nn.Linear(dim, hidden).weight
    const Tensor up = to_device(hup, {hidden, dim}, dt);
    const Tensor down = to_device(hdown, {dim, hidden}, dt);  // nn.Linear(hidden, dim).weight
    const Tensor g = empty({batch, seq, hidden}, dt), u = empty({batch, seq, hidden}, dt);
    const Tensor m = empty({batch, seq, hidden}, dt);
    const Tensor y = empty({batch, seq, dim}, dt);

    auto forward = [&] {
      ops::linear(x, gate, nullptr, g);
      ops::linear(x, up, nullptr, u);
      ch03::gelu_mul(g, u, m, kernel);  // gelu(g) * u: gelu(g) stays in registers
      ops::linear(m, down, nullptr, y);
    };

    poison(y);
    forward();
    const CompareResult check = compare_rows(
        to_host(y), rows, dim,
        [&](int64_t r, double* out) {
          ref::geglu_mlp_row(&hx[r * dim], hgate.data(), hup.data(), hdown.data(), dim, hidden, out);
        },
        tolerance_for(dt, hidden));
    require_match(check, "mlp");
    fmt::print("check: {}\noutput checksum: {:#018x}\n", check.report, checksum(y));

    if (common.check_only) return 0;

    const Trace trace = profile_forward(common, "mlp_fwd", forward);
    report(trace, gpu, common, "mlp_fwd", forward,
           trace_path(common, "03_fused_mlp", fmt::format("b{}_s{}_d{}_h{}", batch, seq, dim, hidden)));
    return 0;
  });
}
