#include "chapter/chapter.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "chapter/gpu_timer.h"
#include "chapter/paths.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/values.h"
#include "profiler/profiler.h"
#include "trace/model/index.h"
#include "trace/model/json_write.h"
#include "trace/model/overlap.h"
#include "trace/renderers/kernels_view.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/steps_table.h"
#include "trace/renderers/timeline.h"
#include "trace/text/text.h"

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
    throw Error(no_gpu_message(e.what(), program_name()), e.exit_code);  // the gpu room's reason, and where our traces are
  }
  fmt::print("GPU {}: {} (sm_{}{}, {} SMs, {:.1f} GiB)\n", g.id, g.name, g.major, g.minor, g.sms,
             g.total_mem / 1073741824.0);
  return g;
}

GpuInfo start_benchmark() {
  try {
    return require_gpu();
  } catch (const NoGpuError& e) {
    throw Error(std::string(e.what()) + ". The figures this benchmark printed on an H100 are in " +
                    bench_results_dir() + " (see bench/README.md)",
                e.exit_code);
  }
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
  // The sample, row by row: element i is row sample.rows[i / cols], column sample.cols[i % cols].
  const size_t cols = sample.cols.size();
  std::vector<int64_t> flat;
  for (int64_t m : sample.rows)
    for (int64_t n : sample.cols) flat.push_back(m * N + n);
  const std::vector<float> got = values_at(out, flat);
  std::vector<double> ref(flat.size());
  for (size_t r = 0; r < sample.rows.size(); ++r) ref_row(sample.rows[r], sample.cols, &ref[r * cols]);
  const CompareResult r = compare(got, ref, tol, 5, [&](int64_t i) {
    return fmt::format("[{:>8}, {:>8}]", sample.rows[size_t(i) / cols], sample.cols[size_t(i) % cols]);
  });
  const NonFinite nf = count_nonfinite(out);
  if (!r.ok || nf.count) {
    std::string report = r.ok ? "" : "  [     row,   column]\n" + r.report;
    if (nf.count)
      report += fmt::format("  {} of the {} values of the whole output are NaN or Inf (the first at [{}, {}])\n",
                            nf.count, M * N, nf.first / N, nf.first % N);
    throw Error(
        fmt::format("{}: {} of the {} values checked differ from the CPU reference, or are NaN or Inf in the "
                    "whole output\n{}",
                    what, r.mismatches + nf.count, r.checked, report));
  }
  const bool all = sample.size() == M * N;
  return fmt::format(
      "{} values ({}{} rows x {} columns) within atol {:g} + rtol {:g} * |ref| of the CPU reference "
      "(max abs error {:.3g}); all {} values finite",
      sample.size(), all ? "all: " : "", sample.rows.size(), cols, tol.atol, tol.rtol, r.max_abs_err, M * N);
}

std::string trace_path(const CommonOptions& common, const std::string& chapter, const std::string& suffix) {
  // A schedule other than the default is in the name, so a cold run (--wait 0 --warmup-steps 0) does not overwrite
  // the warm run's trace.
  const Schedule& s = common.schedule;
  const Schedule plain;
  const std::string schedule = s.wait == plain.wait && s.warmup == plain.warmup && s.active == plain.active
                                   ? ""
                                   : fmt::format("_wait{}_warmup{}_active{}", s.wait, s.warmup, s.active);
  return common.trace_dir + "/" + chapter + (suffix.empty() ? "" : "_" + suffix) + (common.graph ? "_graph" : "") +
         schedule + ".json";
}

void write_trace(const Trace& trace, const std::string& path) {
  save_trace(trace, path);
  fmt::print("trace: {} ({} events)\n", path, trace.events.size());
}

namespace {

// What this GPU really does, measured now: a device-to-device copy (bytes read + written per second) and a large
// GEMM in `dtype` through the same cuBLASLt path the chapters use, each timed by GpuTimer (median of a few runs).
// Achieved figures are shown against these.
struct Ceilings {
  size_t copy_bytes = size_t{256} << 20;  // copied: read once and written once
  double copy_gbs = 0;
  double gemm_tflops = 0;
  int64_t gemm_n = 0;
};
Ceilings measure_ceilings(DType dtype, const GpuTimer& timer) {
  Ceilings c;
  {
    const int64_t elems = static_cast<int64_t>(c.copy_bytes / dtype_size(DType::BF16));
    const Tensor src = empty({elems}, DType::BF16), dst = empty({elems}, DType::BF16);
    const GpuTiming t = timer.time(
        [&] {
          CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, c.copy_bytes, cudaMemcpyDeviceToDevice, current_stream()));
        },
        5);
    c.copy_gbs = 2.0 * c.copy_bytes / (t.median_us() * 1e-6) / 1e9;
  }
  c.gemm_n = dtype == DType::BF16 ? 8192 : 4096;
  const int64_t n = c.gemm_n;
  Tensor a = random_tensor({n, n}, 1, dtype);
  Tensor b = random_tensor({n, n}, 2, dtype);
  Tensor out = empty({n, n}, dtype);
  const GpuTiming t = timer.time([&] { ops::mm(a, b, out); }, 3);
  c.gemm_tflops = 2.0 * n * n * n / (t.median_us() * 1e-6) / 1e12;
  return c;
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
    if (op && !op->input_types().empty() && op->input_types()[0] == "float") dtype = DType::F32;
  }
  const Ceilings ceil = measure_ceilings(dtype, GpuTimer());
  fmt::print(
      "\nGPU work of {} on {}, against ceilings measured just now on this GPU: a {} MiB device-to-device copy at "
      "{:.0f} GB/s and a {}^3 {} GEMM at {:.1f} TFLOP/s. Bytes are each input read once and the output written once; "
      "the L2 is not flushed between steps, so a kernel whose inputs are still cached can pass 100% of the copy.\n",
      last.name, gpu.name, ceil.copy_bytes >> 20, ceil.copy_gbs, ceil.gemm_n, dtype_name(dtype), ceil.gemm_tflops);
  // The table is ladder-trace kernels' (trace/renderers/kernels_view.h), one row per activity of the step, with the
  // ceilings measured now as its peaks.
  KernelViewOptions opt;
  opt.step = static_cast<int>(index.steps().size()) - 1;
  opt.all = true;
  opt.compact = true;
  opt.peak = Peak{ceil.gemm_tflops, ceil.copy_gbs, "measured", "measured just now on this GPU"};
  opt.gbps_peak_label = "% copy";
  opt.tflops_peak_label = "% GEMM";
  opt.width = 110;  // a 60-character "kernel (op)" column, as before
  fmt::print("{}", kernels_view(index, opt));
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
  // GPU time per forward, as bench/ times kernels (chapter/gpu_timer.h): a cold L2, CUDA events around the forward
  // alone, the median of 50 queued runs (fewer if they would take over 2 s).
  const GpuTimer timer;
  const GpuTiming gpu_time = timer.time(forward, 50);
  fmt::print("\nGPU time per forward: {:.1f} us (median of {}, CUDA events around the forward, {})",
             gpu_time.median_us(), gpu_time.runs(), timer.flush_words());

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
  // The last line: what to run next to see this run's trace.
  fmt::print("\nOpen the trace in Perfetto: {} open {}\n", ladder_trace_command(), path);
}

}  // namespace ladder
