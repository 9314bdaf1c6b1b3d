// `ladder-trace kernels`: every kernel, copy and set of a trace, by name (or one row each), with its time, its share
// of the GPU time and, where the trace says how much work it did, its GB/s and TFLOP/s against a peak. The chapters
// print their kernel table through the same code, with the ceilings they measured as the peaks.
//
// The rows and where their work comes from: kernel_table.h.
#pragma once

#include <string>

#include "trace/analyses/kernel_table.h"
#include "trace/analyses/peaks.h"
#include "trace/model/index.h"
#include "trace/renderers/output_table.h"

namespace ladder {

struct KernelViewOptions {
  int step = -1;       // the index in index.steps() of the one step to show; -1: the whole trace
  bool all = false;    // one row per activity in time order, instead of one per name
  // tflops/gbps 0: no % column for that figure. Which peak a row is rated against, and why no % is ever above 100:
  // kernel_rates (kernel_table.h).
  Peak peak;
  // The chapters' layout: kernel (op), time, GB/s, % of the copy ceiling, TFLOP/s, % of the GEMM ceiling.
  bool compact = false;
  std::string gbps_peak_label = "% peak", tflops_peak_label = "% peak";
  int width = 100;     // characters across (the name column takes what the numbers leave); 0: every name whole
  OutputFormat format = OutputFormat::Text;
};

// The table, footnotes included (why a cell is "-", why a % is of another peak); CSV/JSON: kernel_frame's records
// (kernel_table.h), the reasons in "note".
std::string kernels_view(const TraceIndex& index, const KernelViewOptions& options);

}  // namespace ladder
