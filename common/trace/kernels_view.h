// `ladder-trace kernels`: every kernel, copy and set of a trace, by name (or one row each), with its time, its share
// of the GPU time and, where the trace says how much work it did, its GB/s and TFLOP/s against a peak. The chapters
// print their kernel table through the same code, with the ceilings they measured as the peaks.
//
// Where the work comes from: a kernel's bytes and FLOPs are its launching op's (trace/work.h, from the op's recorded
// "Input Dims" and "Input type"), and only when that op launched this one kernel: an op that launched several does
// not say how its work splits between them. A copy or set has its own "bytes" and no FLOPs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/index.h"
#include "trace/peaks.h"
#include "trace/output_table.h"

namespace ladder {

// Tensor cores, as far as the kernel's name says it (the rule, case-insensitive): "simt" in the name says no; else
// yes for cuBLASLt's nvjet_*, any name with wgmma, hmma, imma, tensorop, cutlass, flash or fmha, the MMA shape tags
// of cuBLAS's older GEMMs (884gemm, 1688gemm, 16816gemm), and xmma_* GEMMs unless their types are plain FP32
// ("f32f32_f32f32_f32" without "tf32": cuBLAS runs those on the FP32 units). Any other name: no (Triton's and
// hand-written kernels do not say, so "no" there means "the name does not say").
bool uses_tensor_cores(const std::string& kernel_name);

struct KernelViewOptions {
  int step = -1;       // the index in index.steps() of the one step to show; -1: the whole trace
  bool all = false;    // one row per activity in time order, instead of one per name
  // tflops/gbps 0: no % column for that figure. A kernel that uses no tensor cores (uses_tensor_cores) is rated
  // against peak.fp32_tflops where it is set (the datasheet peaks), any other against peak.tflops.
  Peak peak;
  // The chapters' layout: kernel (op), time, GB/s, % of the copy ceiling, TFLOP/s, % of the GEMM ceiling.
  bool compact = false;
  std::string gbps_peak_label = "% peak", tflops_peak_label = "% peak";
  int width = 100;     // characters across (the name column takes what the numbers leave)
  OutputFormat format = OutputFormat::Text;
};

// One row of the table before any layout: a kernel, copy or set by (category, name), or one activity (options.all).
struct KernelRow {
  std::string name, op, cat;  // op: the launching op's name, "several ops", or "" (none)
  int calls = 0;
  int64_t total_ns = 0, first_ts = 0;
  // The calls whose work is known: their work and their time, so the rate is the work over the time it took.
  double bytes = 0, flops = 0;
  int64_t rated_ns = 0;
  int rated = 0;
  bool flops_known = false;
  bool recorded = false;  // some of `flops` is the op's recorded "flops", not derived from its shapes
  // Calls whose work the shapes do not give but whose op recorded its FLOPs (and launched this one kernel).
  double rec_flops = 0;
  int64_t rec_ns = 0;
  int rec_calls = 0;
  int why = -1;  // the first reason a call's work is unknown (a footnote of kernels_view), -1 none
  bool tensor_cores = false;
  bool copy = false;  // a copy or set
};
struct KernelTable {
  std::vector<KernelRow> rows;  // by total time, longest first (options.all: in time order)
  int64_t gpu_ns = 0;           // the GPU time of every activity shown
  size_t activities = 0;
};
// The rows of options.step (or of the whole trace); options' layout fields aside.
KernelTable kernel_table(const TraceIndex& index, const KernelViewOptions& options);

// The table, footnotes included (why a cell is "-"); CSV/JSON: one record per row, with the reason in "note".
std::string kernels_view(const TraceIndex& index, const KernelViewOptions& options);

}  // namespace ladder
