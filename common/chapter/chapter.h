// What every chapter's main does around its forward: run guarded, find the GPU, check against the CPU, profile, write
// the trace, print what a reader needs. Keeping it here keeps each main.cpp short enough to read beside the blog.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "chapter/cli.h"
#include "chapter/compare.h"
#include "gpu/info.h"
#include "trace/model/trace.h"

namespace ladder {

// Runs `body`, turning any ladder::Error into one line on stderr ("error: ...") and its exit code; CLI11 errors are
// handled by parse_options before.
int run_main(const std::function<int()>& body);

// Prints "GPU 0: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)". Throws the no-GPU error (exit 2) when there is
// none, pointing at the committed reference traces.
GpuInfo start_on_gpu();
// What a chapter does first: checks --trace-dir without creating anything (a bad one fails before anything else),
// finds the GPU as above, and then creates the trace folder (not with --check-only, which writes no trace).
GpuInfo start_on_gpu(const CommonOptions& common);
// What a benchmark does first: the GPU, or the no-GPU error (exit 2) pointing at the benchmarks' committed results.
GpuInfo start_benchmark();

// Checks a forward's output on the GPU, `out` ([M, N] as a contiguous tensor of M * N elements), against a float64 CPU
// reference on the elements `sample` picks (ref_row(m, cols, ref) writes the reference of row m at those columns), and
// counts on the GPU that every one of its elements is finite (outputs are poisoned first, so an unwritten element
// fails). Throws ladder::Error with the first mismatches; else returns the line the chapter prints after "check: ",
// saying how many values were checked.
std::string check_output(const Tensor& out, int64_t M, int64_t N, const OutputSample& sample,
                         const std::function<void(int64_t m, const std::vector<int64_t>& cols, double* ref)>& ref_row,
                         Tolerance tol, const std::string& what);

// <trace-dir>/<chapter>_<suffix>[_graph][_wait<W>_warmup<U>_active<A>].json, e.g.
// traces/02_linear_batch1024_in32_out64.json; the schedule is named only when it is not the default 1, 1, 3.
std::string trace_path(const CommonOptions& common, const std::string& chapter, const std::string& suffix);

// Profiles the forward per the schedule: each step is ProfilerStep#k { <range_name> { forward } synchronize }. With
// --graph the forward is captured into a CUDA graph first, and each step replays it with one cudaGraphLaunch. The
// profiler detaches CUPTI when it is done, so the forward runs at full speed again afterwards.
Trace profile_forward(const CommonOptions& common, const std::string& range_name, const std::function<void()>& forward);

// Everything after profiling: writes the trace to `path`, prints the summary table, the kernels of one step with their
// achieved GB/s and TFLOP/s against ceilings measured on this GPU, the per-step regime (kernels, GPU busy time over
// the step's wall time, CPU time in launch calls), the timeline of the last step, and the forward's GPU and host time
// with the profiler off (measured after it detached) and while it records.
void report(const Trace& trace, const GpuInfo& gpu, const CommonOptions& common, const std::string& range_name,
            const std::function<void()>& forward, const std::string& path);

// The parts of report(), for a view of their own.
void write_trace(const Trace& trace, const std::string& path);
void print_kernels(const Trace& trace, const GpuInfo& gpu);

// Median host time of one call of `fn` over up to `iters` calls (fewer when one call and its GPU work take long: the
// calls stop after about two seconds, at least 3), what the CPU spends issuing the work; `used` gets the count. Each
// call is followed by a device synchronize outside the timed region, so the GPU never backs up into the measurement.
double host_time_us(const std::function<void()>& fn, int iters = 200, int* used = nullptr);

}  // namespace ladder
