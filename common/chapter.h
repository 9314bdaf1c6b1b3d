// What every chapter's main does around its forward: run guarded, find the GPU, check against the CPU, profile, write
// the trace, print what a reader needs. Keeping it here keeps each main.cu short enough to read beside the blog.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli.h"
#include "compare.h"
#include "device.h"
#include "trace.h"

namespace ladder {

// Runs `body`, turning any ladder::Error into one line on stderr ("error: ...") and its exit code; CLI11 errors are
// handled by parse_options before.
int run_main(const std::function<int()>& body);

// Prints "GPU 0: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)". Throws the no-GPU error (exit 2) when there is
// none, pointing at the committed reference traces.
GpuInfo start_on_gpu();

// traces/<chapter>_<suffix>.json, e.g. trace_path("traces", "02_linear", "batch1024_in32_out64").
std::string trace_path(const std::string& dir, const std::string& chapter, const std::string& suffix);

// Writes the trace and prints "trace: <path> (N events)".
void write_trace(const Trace& trace, const std::string& path);

// The summary table, then per kernel of one active step: its time, the op that launched it, and the achieved GB/s
// and TFLOP/s (from the op's recorded dims) against ceilings measured on this GPU in this run.
void print_report(const Trace& trace, const GpuInfo& gpu);

// Per active step: kernels, GPU busy time (union of GPU activity) over the step's wall time, and CPU time in launch
// calls: the overhead-bound vs compute-bound question as numbers.
void print_regime(const Trace& trace);

// Median host time of one call of `fn` over `iters` calls: what the CPU spends issuing the work. Each call is followed
// by a device synchronize outside the timed region, so the GPU never backs up into the measurement.
double host_time_us(const std::function<void()>& fn, int iters = 50);

// "host time per forward": the median of host_time_us(forward) with the profiler off, beside the mean duration of the
// `range_name` ranges in the trace, i.e. the same forward while the profiler records.
void print_host_time(const Trace& trace, const std::string& range_name, const std::function<void()>& forward);

}  // namespace ladder
