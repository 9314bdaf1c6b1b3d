#include "chapter/chapter.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "chapter/paths.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/values.h"
#include "profiler/profiler.h"
#include "trace/analysis.h"
#include "trace/overlap.h"
#include "trace/views.h"

namespace ladder {

int run_main(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::fflush(stdout);
    std::cerr << "error: " << e.what() << "\n";
    return e.exit_code;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

GpuInfo start_on_gpu() {
  GpuInfo g;
  try {
    g = require_gpu();
  } catch (const NoGpuError& e) {
    throw Error(no_gpu_message(e.what()), e.exit_code);  // the gpu room's reason, and where our traces are
  }
  fmt::print("GPU {}: {} (sm_{}{}, {} SMs, {:.1f} GiB)\n", g.id, g.name, g.major, g.minor, g.sms,
             g.total_mem / 1073741824.0);
  return g;
}

GpuInfo start_on_gpu(const CommonOptions& common) {
  check_trace_dir(common.trace_dir);
  GpuInfo g = start_on_gpu();
  if (!common.check_only) ensure_writable_dir(common.trace_dir);
  return g;
}

std::string check_output(const Tensor& out, int64_t M, int64_t N, const OutputSample& sample,
                         const std::function<void(int64_t, const std::vector<int64_t>&, double*)>& ref_row,
                         Tolerance tol, const std::string& what) {
  if (out.numel() != M * N)
    throw Error(fmt::format("{}: check_output: {} values, expected {} x {}", what, out.numel(), M, N));
  std::vector<int64_t> flat;
  for (int64_t m : sample.rows)
    for (int64_t n : sample.cols) flat.push_back(m * N + n);
  const std::vector<float> got = values_at(out, flat);
  std::vector<double> ref(sample.cols.size());
  CompareResult r;
  std::string rows;
  size_t i = 0;
  for (int64_t m : sample.rows) {
    ref_row(m, sample.cols, ref.data());
    for (size_t c = 0; c < sample.cols.size(); ++c, ++i) {
      const double g = got[i], e = ref[c], err = std::fabs(g - e);
      // Written so that NaN fails: !(err <= bound) is true for NaN.
      const bool ok = std::isfinite(g) && err <= tol.atol + tol.rtol * std::fabs(e);
      if (std::isfinite(g)) r.max_abs_err = std::max(r.max_abs_err, err);
      if (!ok && r.mismatches++ < 5)
        rows += fmt::format("  [{:>8}, {:>8}]  ref {:>14.7g}  got {:>14.7g}\n", m, sample.cols[c], e, g);
    }
  }
  const NonFinite nf = count_nonfinite(out);
  r.checked = static_cast<int64_t>(got.size());
  r.ok = r.mismatches == 0 && nf.count == 0;
  if (!r.ok) {
    r.report = fmt::format("  {:>20}  {:>18}  {:>18}\n", "[row, column]", "ref", "got") + rows;
    if (nf.count)
      r.report += fmt::format("  {} of the {} values of the whole output are NaN or Inf (the first at [{}, {}])\n",
                              nf.count, M * N, nf.first / N, nf.first % N);
    r.mismatches += nf.count;
    throw Error(fmt::format("{}: {} of the {} values checked differ from the CPU reference, or are NaN or Inf in the "
                            "whole output\n{}",
                            what, r.mismatches, r.checked, r.report));
  }
  const bool all = sample.size() == M * N;
  return fmt::format("{} values ({}{} rows x {} columns) within atol {:g} + rtol {:g} * |ref| of the CPU reference "
                     "(max abs error {:.3g}); all {} values finite",
                     sample.size(), all ? "all: " : "", sample.rows.size(), sample.cols.size(), tol.atol, tol.rtol,
                     r.max_abs_err, M * N);
}

std::string trace_path(const CommonOptions& common, const std::string& chapter, const std::string& suffix) {
  return common.trace_dir + "/" + chapter + (suffix.empty() ? "" : "_" + suffix) + (common.graph ? "_graph" : "") +
         ".json";
}

void write_trace(const Trace& trace, const std::string& path) {
  save_trace(trace, path);
  fmt::print("trace: {} ({} events; open it in https://ui.perfetto.dev)\n", path, trace.events.size());
}

namespace {

// Median of `runs` timings of fn() on the GPU, in milliseconds, with CUDA events right around it; `before` runs
// ahead of each timing, outside it (an L2 flush, say). Fewer runs (at least 3) when they would take more than about
// two seconds, judged by the warm-up run; `used` gets the count.
double median_ms(const std::function<void()>& fn, int runs, const std::function<void()>& before = {},
                 int* used = nullptr) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  CUDA_CHECK(cudaEventRecord(start, current_stream()));
  fn();  // warm-up
  CUDA_CHECK(cudaEventRecord(stop, current_stream()));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float warm = 0;
  CUDA_CHECK(cudaEventElapsedTime(&warm, start, stop));
  runs = std::clamp(static_cast<int>(2000.0 / std::max(warm, 1e-6f)), std::min(runs, 3), runs);
  if (used) *used = runs;
  for (int i = 0; i < runs; ++i) {
    if (before) before();
    CUDA_CHECK(cudaEventRecord(start, current_stream()));
    fn();
    CUDA_CHECK(cudaEventRecord(stop, current_stream()));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// What this GPU really does, measured now: a device-to-device copy (bytes read + written per second) and a large
// GEMM in `dtype` through the same cuBLASLt path the chapters use. Achieved figures are shown against these.
struct Ceilings {
  double copy_gbs = 0;
  double gemm_tflops = 0;
  int64_t gemm_n = 0;
};
Ceilings measure_ceilings(DType dtype) {
  Ceilings c;
  {
    const size_t bytes = size_t{256} << 20;
    Tensor src = empty({int64_t(bytes)}, DType::BF16), dst = empty({int64_t(bytes)}, DType::BF16);
    const double ms =
        median_ms([&] { CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice)); }, 5);
    c.copy_gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
  }
  c.gemm_n = dtype == DType::BF16 ? 8192 : 4096;
  const int64_t n = c.gemm_n;
  Tensor a = random_tensor({n, n}, 1, dtype);
  Tensor b = random_tensor({n, n}, 2, dtype);
  Tensor out = empty({n, n}, dtype);
  const double ms = median_ms([&] { ops::mm(a, b, out); }, 3);
  c.gemm_tflops = 2.0 * n * n * n / (ms * 1e-3) / 1e12;
  return c;
}

std::string shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

}  // namespace

void print_kernels(const Trace& trace, const GpuInfo& gpu) {
  const TraceIndex index(trace);
  const std::vector<StepStats> steps = step_stats(index);
  if (steps.empty()) return;
  const StepStats& last = steps.back();
  auto launching_op = [&](const Event* e) {
    const int op = index.op_of(static_cast<int>(e - trace.events.data()));
    return op >= 0 ? &trace.events[op] : nullptr;
  };

  // The dtype of the chapter's GEMMs decides which GEMM ceiling is the fair one.
  DType dtype = DType::BF16;
  for (const Event* e : last.gpu_events) {
    const Event* op = launching_op(e);
    if (op && !op->input_types.empty() && op->input_types[0] == "float") dtype = DType::F32;
  }
  const Ceilings ceil = measure_ceilings(dtype);
  fmt::print(
      "\nGPU work of {} on {}, against ceilings measured just now on this GPU: a device-to-device copy at {:.0f} GB/s "
      "and a {}^3 {} GEMM at {:.1f} TFLOP/s. Bytes are each input read once and the output written once; the L2 is "
      "not flushed between steps, so a kernel whose inputs are still cached can pass 100% of the copy.\n",
      last.name, gpu.name, ceil.copy_gbs, ceil.gemm_n, dtype_name(dtype), ceil.gemm_tflops);
  fmt::print("  {:<60} {:>9} {:>9} {:>8} {:>9} {:>8}\n", "kernel (op)", "time", "GB/s", "% copy", "TFLOP/s", "% GEMM");
  for (const Event* e : last.gpu_events) {
    const Event* op = launching_op(e);
    const std::string label =
        shorten(kernel_display_name(e->name), op ? 56 - op->name.size() : 56) + " (" + (op ? op->name : "?") + ")";
    const double s = e->dur_ns * 1e-9;
    Work w;
    std::string rates = fmt::format("{:>9} {:>8} {:>9} {:>8}", "-", "-", "-", "-");
    if (e->cat == Cat::Kernel && op && op_work(*op, &w) && s > 0) {
      const double gbs = w.bytes / s / 1e9, tflops = w.flops / s / 1e12;
      rates = fmt::format("{:>9.0f} {:>7.1f}% {:>9.2f} {:>7.1f}%", gbs, 100 * gbs / ceil.copy_gbs, tflops,
                          100 * tflops / ceil.gemm_tflops);
      if (w.flops == 0) rates = fmt::format("{:>9.0f} {:>7.1f}% {:>9} {:>8}", gbs, 100 * gbs / ceil.copy_gbs, "-", "-");
    } else if (e->cat != Cat::Kernel && e->gpu.bytes > 0 && s > 0) {
      const double gbs = e->gpu.bytes / s / 1e9;  // a memset writes its bytes; a memcpy reads and writes them
      rates = fmt::format("{:>9.0f} {:>8} {:>9} {:>8}", gbs, "-", "-", "-");
    }
    fmt::print("  {:<60} {:>7.1f}us {}\n", label, e->dur_ns / 1e3, rates);
  }
}


double host_time_us(const std::function<void()>& fn, int iters, int* used) {
  std::vector<double> us;
  const auto w0 = std::chrono::steady_clock::now();
  fn();
  CUDA_CHECK(cudaDeviceSynchronize());
  // A forward of a huge shape takes seconds on the GPU: stop after about two seconds of them.
  const double one_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  iters = std::clamp(static_cast<int>(2.0 / std::max(one_s, 1e-9)), std::min(iters, 3), iters);
  if (used) *used = iters;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaDeviceSynchronize());  // outside the timed region: we time what the CPU spends issuing the work
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

Trace profile_forward(const CommonOptions& common, const std::string& range_name,
                      const std::function<void()>& forward) {
  if (!common.graph) return profile(common.schedule, range_name, forward);
  const CudaGraph graph(forward);
  return profile(common.schedule, range_name, [&] { graph.launch(); });
}

void report(const Trace& trace, const GpuInfo& gpu, const CommonOptions& common, const std::string& range_name,
            const std::function<void()>& forward, const std::string& path) {
  write_trace(trace, path);
  const TraceIndex index(trace);
  fmt::print("\n{}\n", summary_table(index));
  print_kernels(trace, gpu);
  fmt::print("\n{}", regime_table(index));
  fmt::print("\n{}", timeline(trace, -1, terminal_width()));
  // Kernels that seem to start before the previous one on their stream ended (graph replays): say so once.
  if (const std::string note = overlap_note(trace); !note.empty()) fmt::print("{}\n", note);

  // Host time per forward. The recorded figure is the mean length of the forward's ranges in the trace: the same
  // work with every op range, NVTX push and CUPTI record added.
  double sum = 0;
  int n = 0;
  for (const Event& e : trace.events) {
    if (e.cat == Cat::UserAnnotation && e.name == range_name) {
      sum += e.dur_ns / 1e3;
      ++n;
    }
  }
  // The profiler-off figures are measured now, after the profiler detached CUPTI (cuptiFinalize, in ~Profiler): a
  // CUPTI left subscribed would slow every CUDA call down and inflate them. Not before profiling: in 01's cold run
  // (no --warmup) the profiled steps must be the first the process runs.
  // GPU time per forward, the way bench/ times kernels: a cold L2 (a memset of twice its size before each run), CUDA
  // events around the forward alone, the median of many runs.
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, gpu.id));
  const Tensor flush = empty({2 * int64_t(l2)}, DType::BF16);
  int runs = 0;
  const double gpu_us = 1e3 * median_ms(
                                  forward, 50,
                                  [&] { CUDA_CHECK(cudaMemsetAsync(flush.data, 0, flush.nbytes(), current_stream())); },
                                  &runs);
  fmt::print("\nGPU time per forward: {:.1f} us (median of {}, CUDA events around the forward, L2 flushed before each)",
             gpu_us, runs);

  int iters = 0;
  const double eager = host_time_us(forward, 200, &iters);
  fmt::print("\nHost time per forward (median of {}, profiler off: measured after it detached CUPTI): {:.1f} us eager",
             iters, eager);
  if (common.graph) {
    const CudaGraph graph(forward);
    const double replay = host_time_us([&] { graph.launch(); }, iters);
    fmt::print(", {:.1f} us replayed from a CUDA graph ({:.1f}x less)", replay, eager / replay);
  }
  fmt::print(
      "\nHost time per forward while the profiler records{}: {:.1f} us (mean of the {} {} ranges in the trace)\n",
      common.graph ? " (graph replay)" : "", n ? sum / n : 0.0, n, range_name);
}

}  // namespace ladder
