// bench_elementwise: how close do chapter 03's hand-written elementwise kernels come to the memory system's speed?
//
// For every variant of gelu and mul (03_simple_mlp) and of gelu_mul (03_fused_mlp), at the blog's shape [8192, 3072]
// bf16 by default, and of 01_matmul_add's bias add at float32 [4096, 4096], it prints the median kernel time over many
// runs, the achieved bandwidth (bytes read + bytes written, divided by the time), and that as a percentage of a
// device-to-device cudaMemcpyAsync that moves the same number of bytes (a copy of half of them: it reads and writes
// each), measured the same way in the same run. These kernels do almost no arithmetic per byte, so a copy is the
// ceiling they should be measured against; the GPU's datasheet bandwidth is not reachable by anything.
//
// How each run is timed: by ladder::GpuTimer (common/chapter/gpu_timer.h), the way every chapter times its forward.
//  - Before each run, one kernel reads a buffer twice the size of the L2 cache, so the run's inputs come from HBM and
//    not from the cache the previous run warmed. Without it, part of a 50 MB input would still sit in an H100's 50 MB
//    L2 and the kernel would look faster than it is in a real forward. A read, not a memset: a memset would leave the
//    L2 full of dirty lines, which the timed run would pay to write back.
//  - CUDA events recorded on the stream right before and after the kernel alone (the flush is outside them), every
//    run queued without waiting, so the events time the kernel and not its launch.
//  - 5 warm-up runs, then --iters timed runs; the median is reported (the minimum too, for reference).
//  - Before each kernel and each copy, the GPU idles --rest-ms (bench/rest.h), so that no row is timed at the lower
//    clock the rows before it left the GPU in; --load-ms then runs each kernel back to back that long first. The
//    copies are never loaded: they stay the reference, timed from rest.
// Before timing, each variant's output is checked bit for bit against the plain variant (and gelu_mul against the
// eager gelu then mul): a fast wrong kernel is not a result. A mismatch exits 1.
//
// Run:  build/bench/bench_elementwise [--rows 8192] [--cols 3072] [--iters 100] [--seed 0] [--rest-ms 300]
//       [--load-ms 0]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "01_matmul_add/kernels.cuh"
#include "03_fused_mlp/kernels.cuh"
#include "03_simple_mlp/kernels.cuh"
#include "bench/bits.h"
#include "bench/copy_rate.h"
#include "bench/rest.h"
#include "chapter/chapter.h"
#include "chapter/cli.h"
#include "chapter/gpu_timer.h"
#include "cuda/check.h"
#include "gpu/info.h"
#include "gpu/memory.h"
#include "gpu/values.h"

namespace {

using bf16 = __nv_bfloat16;
using ladder::DType;
using ladder::Tensor;

// Every run of `launch`, timed by GpuTimer after `rest`: exactly `iters` runs (no time cap: --iters says how many).
ladder::GpuTiming time_runs(const ladder::GpuTimer& timer, const benchmarks::Rest& rest, int iters,
                            const std::function<void()>& launch) {
  rest.before(launch);
  return timer.time(launch, iters, 0);
}

using benchmarks::bits_of;

// Fails loudly (exit 1) unless `got` holds exactly the bits `want` holds. Exactly: not compare_bits's share, which
// counts any two NaNs as the same value.
void require_same_bits(const Tensor& got, const std::vector<uint16_t>& want, const std::string& what) {
  const std::vector<uint16_t> bits = bits_of(got);
  const auto [a, b] = std::mismatch(bits.begin(), bits.end(), want.begin());
  if (a != bits.end())
    throw ladder::Error(fmt::format(
        "{}: output differs from the reference at value {} (bits 0x{:04x}, expected 0x{:04x}); not timing a wrong "
        "kernel",
        what, (a - bits.begin()) * 2 / ladder::dtype_size(got.dtype), *a, *b));
}

struct Row {
  std::string op, variant;
  double bytes = 0, median_us = 0, min_us = 0, copy_us = 0;
};

void print_row(const Row& r) {
  const double gbs = r.bytes / (r.median_us * 1e3);
  fmt::print("{:<10} {:<16} {:>10.1f} {:>10.2f} {:>9.2f} {:>9.0f} {:>10.1f}\n", r.op, r.variant, r.bytes / 1e6,
             r.median_us, r.min_us, gbs, 100.0 * r.copy_us / r.median_us);
}

int bench(int argc, const char* const* argv) {
  CLI::App app{"Times every variant of chapter 03's elementwise kernels against a device-to-device copy."};
  int64_t rows = 8192, cols = 3072;
  int iters = 100;
  uint64_t seed = 0;
  benchmarks::Rest rest;
  app.add_option("--rows", rows, "rows of g and u (batch * seq)")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  app.add_option("--cols", cols, "columns of g and u (the hidden size)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  app.add_option("--iters", iters, "timed runs per kernel; the median is reported")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "seed of the random inputs")->check(ladder::uint64_any());
  rest.add_options(app);
  if (const int code = ladder::parse_options(app, argc, argv); code >= 0) return code;

  const ladder::GpuInfo gpu = ladder::start_benchmark();  // or one line pointing at bench/results/
  const ladder::GpuTimer timer;
  // g, u, h, out, h_ref and y_ref live at once, and beside them the largest copy (mul's: two buffers of 1.5 tensors).
  // Checked before any of them is made, so a shape too large is one clear line, not an out-of-memory crash.
  const ladder::Shape shape = {rows, cols};
  ladder::require_fits({shape, shape, shape, shape, shape, shape, {3, rows, cols}}, DType::BF16);
  const int64_t n = rows * cols;
  const double tensor_bytes = 2.0 * n;
  fmt::print("GPU {}: {} (sm_{}{}, {} SMs), {}\n", gpu.id, gpu.name, gpu.major, gpu.minor, gpu.sms,
             timer.flush_words());
  fmt::print("shape [{}, {}] bf16: {} elements, {:.1f} MB per tensor; median of {} runs {} and {} warm-up runs\n",
             rows, cols, n, tensor_bytes / 1e6, iters, rest.words(), ladder::GpuTimer::kWarmupRuns);

  // The ceiling for large transfers, for reference: a 1 GiB copy (2 GiB moved).
  try {
    rest.rest();
    const double gib_us = benchmarks::copy_times(timer, iters, int64_t{2} << 30).median_us();
    fmt::print("1 GiB device-to-device copy: {:.1f} us, {:.0f} GB/s (bytes read + written)\n", gib_us,
               2.0 * 1073741824.0 / (gib_us * 1e3));
  } catch (const ladder::Error& e) {
    fmt::print("1 GiB device-to-device copy: skipped ({})\n", e.what());
  }

  // Random inputs, never zeros: a kernel that skips work on zeros, or an output that is all zeros, would fool us.
  // Made on the GPU (the values random_values would give), so a large shape needs no host memory for them.
  const Tensor g = ladder::random_tensor(shape, seed + 1, DType::BF16, -4.0f, 4.0f);
  const Tensor u = ladder::random_tensor(shape, seed + 2, DType::BF16, -4.0f, 4.0f);
  const Tensor h = ladder::empty(shape, DType::BF16), out = ladder::empty(shape, DType::BF16);

  // The reference outputs: the plain variants, eager gelu then mul. h_ref is also mul's input.
  const Tensor h_ref = ladder::empty(shape, DType::BF16), y_ref = ladder::empty(shape, DType::BF16);
  ch03::find_gelu_variant("plain").launch(g.ptr<bf16>(), h_ref.ptr<bf16>(), n, 0);
  ch03::find_mul_variant("plain").launch(h_ref.ptr<bf16>(), u.ptr<bf16>(), y_ref.ptr<bf16>(), n, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> h_bits = bits_of(h_ref), y_bits = bits_of(y_ref);

  fmt::print(
      "\nGB/s = bytes read + written / median time; % of copy = the copy's median time / the kernel's, same bytes\n");
  fmt::print("\n{:<10} {:<16} {:>10} {:>10} {:>9} {:>9} {:>10}\n", "op", "variant", "moves MB", "median us", "min us",
             "GB/s", "% of copy");
  std::vector<Row> table;
  // One group per op: first the copy that moves the same bytes (100% by definition), then every variant, each
  // checked bit for bit before it is timed.
  auto group = [&](const char* op, double bytes, const std::vector<uint16_t>& want, const Tensor& result,
                   const std::vector<std::pair<std::string, std::function<void()>>>& variants) {
    fmt::print("{}\n", std::string(80, '-'));
    rest.rest();
    const ladder::GpuTiming copy = benchmarks::copy_times(timer, iters, static_cast<int64_t>(bytes));
    print_row({"copy", "cudaMemcpyAsync", bytes, copy.median_us(), copy.min_us(), copy.median_us()});
    for (const auto& [name, launch] : variants) {
      ladder::poison(result);
      launch();
      CUDA_CHECK(cudaDeviceSynchronize());
      require_same_bits(result, want, std::string(op) + " " + name);
      const ladder::GpuTiming t = time_runs(timer, rest, iters, launch);
      table.push_back({op, name, bytes, t.median_us(), t.min_us(), copy.median_us()});
      print_row(table.back());
    }
  };

  std::vector<std::pair<std::string, std::function<void()>>> gelus, muls, fused;
  for (const ch03::GeluVariant& v : ch03::gelu_variants())
    gelus.emplace_back(v.name, [&, launch = v.launch] { launch(g.ptr<bf16>(), h.ptr<bf16>(), n, 0); });
  for (const ch03::MulVariant& v : ch03::mul_variants())
    muls.emplace_back(v.name,
                      [&, launch = v.launch] { launch(h_ref.ptr<bf16>(), u.ptr<bf16>(), out.ptr<bf16>(), n, 0); });
  for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants())
    fused.emplace_back(v.name, [&, launch = v.launch] { launch(g.ptr<bf16>(), u.ptr<bf16>(), out.ptr<bf16>(), n, 0); });
  group("gelu", 2 * tensor_bytes, h_bits, h, gelus);        // reads g, writes h
  group("mul", 3 * tensor_bytes, y_bits, out, muls);        // reads h and u, writes y
  group("gelu_mul", 3 * tensor_bytes, y_bits, out, fused);  // reads g and u, writes y: bit-identical to gelu then mul

  // Chapter 01's bias add at the blog's compute-bound size, float32 [4096, 4096]: reads a and b, writes y.
  const int64_t an = 4096;
  const Tensor a = ladder::to_device(ladder::random_values(an * an, seed + 3, DType::F32), {an, an}, DType::F32);
  const Tensor bias = ladder::to_device(ladder::random_values(an, seed + 4, DType::F32), {an}, DType::F32);
  const Tensor y = ladder::empty({an, an}, DType::F32), y_add_ref = ladder::empty({an, an}, DType::F32);
  ladder::find_variant(ch01::add_variants(), "plain", "add")
      .launch(a.data, bias.data, y_add_ref.data, an, an, DType::F32, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::pair<std::string, std::function<void()>>> adds;
  for (const auto& v : ch01::add_variants())
    adds.emplace_back(v.name, [&, launch = v.launch] { launch(a.data, bias.data, y.data, an, an, DType::F32, 0); });
  fmt::print("{}\nadd: 01_matmul_add's bias add, float32 [{}, {}]\n", std::string(80, '-'), an, an);
  group("add", 4.0 * (2 * an * an + an), bits_of(y_add_ref), y, adds);

  // What fusion buys, variant by variant: eager mode writes h and reads it back (10 bytes per element, not 6).
  fmt::print("\n{:<16} {:>14} {:>14} {:>10}\n", "variant", "gelu + mul us", "gelu_mul us", "saved us");
  for (const Row& f : table) {
    if (f.op != "gelu_mul") continue;
    double eager = 0;
    int found = 0;
    for (const Row& e : table) {
      if ((e.op == "gelu" || e.op == "mul") && e.variant == f.variant) {
        eager += e.median_us;
        ++found;
      }
    }
    if (found == 2)
      fmt::print("{:<16} {:>14.2f} {:>14.2f} {:>10.2f}\n", f.variant, eager, f.median_us, eager - f.median_us);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ladder::run_main([&] { return bench(argc, argv); });
}
