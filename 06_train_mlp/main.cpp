// 06_train_mlp: one training step of the GeGLU MLP: the forward, then the backward for a given dy (random, seeded),
// giving dx, dW_gate, dW_up and dW_down, each checked against a float64 CPU reference.
//
// What this rung shows: the backward pass in a trace. Six GEMMs where the forward had three, under the names of
// PyTorch's autograd nodes (MmBackward0, MulBackward0, GeluBackward0), and what the forward must keep alive for them.
// --mode eager runs what PyTorch's autograd runs, op for op; --mode fused keeps g and u instead of gelu(g), runs one
// hand-written kernel for the whole backward of gelu(g) * u, and treats gate and up as one stacked Linear; --mode
// epilogue keeps g and u and runs that backward in the epilogue of a hand-written dh = dy @ W_down (Hopper); --mode
// recompute keeps only x and makes g, u and h again in the backward.
//
// Guess before you look: how much longer than the forward is the backward, which kernels are new, and how many bytes
// per token does each mode keep between the two?
//
// Run:   build/06_train_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --mode eager
// Trace: traces/06_train_mlp_eager_b64_s128_d768_h3072.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>

#include "06_train_mlp/mlp.h"
#include "06_train_mlp/reference.h"
#include "chapter/chapter.h"
#include "gpu/allocator.h"
#include "gpu/memory.h"
#include "gpu/values.h"
#include "profiler/profiler.h"
#include "work/ladder_ops.h"

using namespace ladder;

namespace {

// The step's random inputs: made on the GPU from these seeds and ranges, and the same values made on the CPU
// (random_values) for its reference.
struct RandomInputs {
  int64_t batch, seq, dim, hidden;
  uint64_t sx, sgu, sdown, sdy;
  float bd, bh;  // the weights' ranges: +-1/sqrt(fan in)

  ch06::Params on_gpu(DType dt) const {
    ch06::Params p;
    p.x = random_tensor({batch, seq, dim}, sx, dt);
    p.dy = random_tensor({batch, seq, dim}, sdy, dt);
    p.w_gate_up = random_tensor({2 * hidden, dim}, sgu, dt, -bd, bd);  // [gate.weight; up.weight]
    p.w_down = random_tensor({dim, hidden}, sdown, dt, -bh, bh);       // down.weight
    return p;
  }
  ch06::MlpValues on_cpu(DType dt) const {
    const int64_t rows = batch * seq;
    ch06::MlpValues v{rows,
                      dim,
                      hidden,
                      random_values(rows * dim, sx, dt),
                      random_values(rows * dim, sdy, dt),
                      random_values(2 * hidden * dim, sgu, dt, -bd, bd),
                      random_values(dim * hidden, sdown, dt, -bh, bh)};
    return v;
  }
};

RandomInputs random_inputs(int64_t batch, int64_t seq, int64_t dim, int64_t hidden, uint64_t seed) {
  const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
  return {batch, seq, dim, hidden, seed + 1, seed + 2, seed + 4, seed + 5, bd, bh};
}

// The step's inputs, weights and gradients, and at most eight [rows, hidden] tensors the step writes. Each size is at
// most 2^31 - 1 and rows = batch * seq < 2^62, so every entry fits in int64; their products need not (step_bytes).
std::vector<Shape> step_shapes(int64_t rows, int64_t dim, int64_t hidden) {
  const Shape rows_dim{rows, dim};
  return {rows_dim, rows_dim, rows_dim, rows_dim, rows_dim, {4 * hidden, dim}, {2 * dim, hidden}, {rows, 8 * hidden}};
}

long double step_bytes(int64_t rows, int64_t dim, int64_t hidden, DType dt) {
  long double bytes = 0;
  for (const Shape& s : step_shapes(rows, dim, hidden)) bytes += static_cast<long double>(s[0]) * s[1] * dtype_size(dt);
  return bytes;
}

// Each gradient against the float64 CPU reference, one line each: the weights' within `tol`, dx within a bound of its
// own.
void print_checks(const ch06::Grads& d, ch06::GradReference& ref, int64_t rows, int64_t dim, int64_t hidden,
                  const Tolerance& tol) {
  std::vector<int64_t> all_dim = ch06::evenly(dim, dim), some_hidden = ch06::evenly(hidden, 12);
  const std::vector<int64_t> dx_rows = ch06::evenly(rows, 12);
  std::vector<double> dx_ref(dx_rows.size() * dim);
  for (size_t r = 0; r < dx_rows.size(); ++r) ref.dx_row(dx_rows[r], all_dim, &dx_ref[r * dim]);
  double dx_max = 0;
  for (double v : dx_ref) dx_max = std::max(dx_max, std::abs(v));
  // dx = [dg | du] @ [W_gate; W_up] is a float32 sum of dg and du rounded as the reference rounds them, so what is
  // left is dx's own bf16 rounding (half an ulp: at most 2^-8 |dx|), in eager also that of its two halves before add_
  // (each at most 2^-8 of a half, which may exceed |dx|), and float32 summation order (far less). Hence rtol 2^-7 and
  // atol 4 x 2^-8 max |dx|: at the blog's shape atol 3.7e-3 against a largest error of 9.4e-4 (eager; 4.8e-4 the
  // other modes), at least 5x the error at the tests' small shapes too, while a tenth of dx written as zeros fails.
  const Tolerance dx_tol{std::ldexp(dx_max, -6), std::ldexp(1.0, -7)};
  const auto dx_row = [&](int64_t m, const auto& cols, double* out) {  // from dx_ref
    const size_t r = std::lower_bound(dx_rows.begin(), dx_rows.end(), m) - dx_rows.begin();
    for (size_t c = 0; c < cols.size(); ++c) out[c] = dx_ref[r * dim + cols[c]];
  };
  fmt::print("check dx:      {}\n", check_output(d.dx, rows, dim, {dx_rows, all_dim}, dx_row, dx_tol, "dx"));
  fmt::print("check dW_gate: {}\n",
             check_output(
                 d.dw_gate(), hidden, dim, {some_hidden, all_dim},
                 [&](int64_t j, const auto& cols, double* out) { ref.dw_gate_row(j, cols, out); }, tol, "dW_gate"));
  fmt::print("check dW_up:   {}\n",
             check_output(
                 d.dw_up(), hidden, dim, {some_hidden, all_dim},
                 [&](int64_t j, const auto& cols, double* out) { ref.dw_up_row(j, cols, out); }, tol, "dW_up"));
  fmt::print("check dW_down: {}\n",
             check_output(
                 d.dw_down, dim, hidden, {ch06::evenly(dim, 64), some_hidden},
                 [&](int64_t n, const auto& cols, double* out) { ref.dw_down_row(n, cols, out); }, tol, "dW_down"));
}

// What the forward kept for the backward, by name, and what the allocator saw: left allocated besides y, and the peak.
void print_held(const std::vector<std::pair<std::string, size_t>>& held, int64_t held_measured, int64_t peak,
                const Tensor& x) {
  size_t held_sum = 0;
  std::string names;
  for (const auto& [name, bytes] : held) {
    held_sum += bytes;
    names += (names.empty() ? "" : ", ") + name;
  }
  fmt::print(
      "held for backward beyond x and the weights: {} = {:.1f} MB (x: {:.1f} MB); the allocator: {:.1f} MB "
      "left allocated by the forward besides y, peak {:.1f} MB above the step's start\n",
      names.empty() ? "nothing" : names, held_sum / 1e6, x.nbytes() / 1e6, held_measured / 1e6, peak / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string mode_arg = "eager";
  CommonOptions common;
  CLI::App app{"06_train_mlp: the GeGLU MLP's forward and backward, one training step"};
  for (auto [name, var, what] : {std::tuple{"--batch", &batch, "sequences in x"},
                                 {"--seq", &seq, "tokens per sequence (x has batch x seq rows)"},
                                 {"--dim", &dim, "model width: features of x and y"},
                                 {"--hidden", &hidden, "hidden width of the MLP: features of gate(x) and up(x)"}})
    app.add_option(name, *var, what)->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--mode", mode_arg,
                 "eager (PyTorch's autograd, op for op), fused (one gelu_mul backward kernel), epilogue (the gelu_mul "
                 "backward in the epilogue of the backward's first GEMM; Hopper) or recompute (04's forward kernel, "
                 "only x kept, g, u and h made again in the backward)")
      ->capture_default_str();
  add_common_options(app, common);
  if (int rc = parse_options(app, argc, argv); rc >= 0) return rc;

  return run_main([&] {
    // A step captured into a graph would free blocks into the shared pool that its replays still write
    // (gpu/allocator.h): refused.
    if (common.graph)
      throw UsageError(
          "--graph: 06_train_mlp replays no CUDA graph (the caching allocator keeps no pool "
          "of its own for a captured training step)");
    const ch06::Mode mode = ch06::parse_mode(mode_arg);  // a bad --mode is a usage error, before any GPU work
    if (const std::string why = ch06::mode_cannot_run(mode, dim, hidden); !why.empty()) throw UsageError(why);
    const DType dt = DType::BF16;
    const int64_t rows = batch * seq;
    // Sizes whose bytes int64 cannot count fit on no GPU: refused before the GPU is asked (require_fits below).
    if (const long double bytes = step_bytes(rows, dim, hidden, dt); bytes > static_cast<long double>(INT64_MAX))
      throw UsageError(
          fmt::format("--batch {} --seq {} --dim {} --hidden {}: the step's tensors would take {:.3g} "
                      "bytes, more than int64 counts; use smaller sizes",
                      batch, seq, dim, hidden, double(bytes)));
    ladder::register_ladder_ops_work();  // the report prints the bytes of our ops (work/ladder_ops.h)
    const GpuInfo gpu = start_on_gpu(common);
    if (const std::string why = ch06::mode_cannot_run(mode, dim, hidden, gpu.major, gpu.minor); !why.empty())
      throw UsageError(why);
    require_fits(step_shapes(rows, dim, hidden), dt);

    const RandomInputs inputs = random_inputs(batch, seq, dim, hidden, common.seed);
    const ch06::Params p = inputs.on_gpu(dt);
    const ch06::Grads d = ch06::grads_like(p);
    ch06::TrainStep step(mode, p, d);

    // The checked step. Every block the allocator hands out during it starts as NaN, and so do the gradients, so an
    // element a kernel leaves unwritten fails the check. The allocator's totals say what the forward keeps for the
    // backward (what it left allocated, less y) and how high the step went.
    std::vector<std::pair<std::string, size_t>> held;
    int64_t held_measured = 0, peak = 0;
    {
      const PoisonAllocations poison_blocks;
      for (const Tensor* t : {&d.dx, &d.dw_gate_up, &d.dw_down}) poison(*t);
      step.keep_dg_du(true);
      const int64_t before = memory_totals().allocated;
      reset_peak_allocated();
      step.forward();
      held = step.held_for_backward();
      held_measured = memory_totals().allocated - before - static_cast<int64_t>(step.y().nbytes());
      step.backward();  // the copies of the check below wait for it
      peak = memory_totals().peak_allocated - before;
    }
    ch06::GradReference ref(inputs.on_cpu(dt));
    fmt::print("mode: {}\n", ch06::mode_name(mode));
    print_checks(d, ref, rows, dim, hidden, tolerance_for(dt, rows));
    print_held(held, held_measured, peak, p.x);
    // dg and du are bit-identical in every mode: the fused kernel rounds as eager's three kernels do.
    fmt::print("output checksum: {:#018x} (dg and du)\n", step.dg_du_checksum());
    step.keep_dg_du(false);

    if (common.check_only) return 0;

    auto train_step = [&] {
      {
        Range fwd("mlp_fwd");
        step.forward();
      }
      Range bwd("mlp_bwd");
      step.backward();
    };
    const Trace trace = profile_forward(common, "mlp_train_step", train_step);
    report(trace, gpu, common, "mlp_train_step", train_step,
           trace_path(common, "06_train_mlp",
                      fmt::format("{}_b{}_s{}_d{}_h{}", ch06::mode_name(mode), batch, seq, dim, hidden)));
    return 0;
  });
}
