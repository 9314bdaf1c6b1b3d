// The kernels of a trace as rows: every kernel, copy and set by name (or one row each), with its time and, where the
// trace says how much work it did, its bytes and FLOPs, rated against a peak (`ladder-trace kernels` and the chapters
// lay it out: kernels_view.h; kernel_frame is the same as a typed table, for CSV, JSON and Python).
//
// Where the work comes from: a kernel's bytes and FLOPs are its launching op's (trace/analyses/work.h, from the op's
// recorded "Input Dims" and "Input type"), and only when that op launched this one kernel: an op that launched several
// does not say how its work splits between them. A copy or set has its own "bytes" and no FLOPs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/peaks.h"
#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

// Tensor cores, as far as the kernel's name says it (the rule, case-insensitive): "simt" in the name says no; else
// yes for cuBLASLt's nvjet_*, any name with wgmma, hmma, imma, tensorop, cutlass, flash or fmha, the MMA shape tags
// of cuBLAS's older GEMMs (884gemm, 1688gemm, 16816gemm), and xmma_* GEMMs unless their types are plain FP32
// ("f32f32_f32f32_f32" without "tf32": cuBLAS runs those on the FP32 units); and yes for the ladder's own GEMM kernels
// (a chapter's namespace, "ch01::" to "ch09::", and "gemm" in the name: every one of them runs wgmma or mma.sync).
// Any other name: no (Triton's and other hand-written kernels do not say).
bool uses_tensor_cores(const std::string& kernel_name);

// Tensor cores for a kernel launched by `op` (null: none known), from what the trace says, first that says:
//  1. the name, where it says yes or no (the library's GEMMs and the ladder's own, uses_tensor_cores above);
//  2. the op, when it launched this one kernel and does a GEMM's FLOPs (work.h) on 16-bit or 8-bit floating inputs
//     ("Input type" c10::BFloat16, c10::Half, c10::Float8_*): yes, as every GEMM library runs those types on them;
//  3. no.
bool kernel_uses_tensor_cores(const std::string& kernel_name, const Event* op);

// Why a row has no GB/s or TFLOP/s, or why its % is of another peak (kernels_view's footnotes, in this order).
enum KernelWhy : int {
  kWhyNone = -1,
  kWhyNoOp,       // no op launched it
  kWhyNoShapes,   // its op has no "Input Dims"
  kWhyNoFormula,  // no formula for its op and shapes (trace/analyses/work.h)
  kWhySplit,      // its op launched more than one kernel
  kWhyNoBytes,    // a copy or set whose "bytes" the trace does not hold
  kWhyCopy,       // a copy or set: its own bytes per second, no %
  kWhyNoFlops,    // an elementwise op: bytes, no FLOPs
  kWhyRecorded,   // TFLOP/s from the "flops" torch recorded for its op
  kWhyAboveFp32,  // above the CUDA cores' FP32 peak: rated against the tensor-core peak
  kWhyAbovePeak,  // above the peak TFLOP/s: no %
  kWhyAboveBandwidth,  // above the peak GB/s: no %
  kWhyCollective,      // an NCCL kernel: GPUs exchanging data, not work its op's shapes describe
  kWhyCount
};
// The footnote's text.
const char* kernel_why_text(int why);

// One row of the table before any layout: a kernel, copy or set by (category, name), or one activity (options.all).
struct KernelRow {
  std::string name, op, cat;  // op: the launching op's name, "several ops", or "" (none)
  int calls = 0;
  int64_t total_ns = 0, first_ts = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0, m2_ns = 0;  // the calls' mean and sum of squared deviations (Welford), for the stddev
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
  int why = kWhyNone;  // the first reason a call's work is unknown
  bool tensor_cores = false;
  bool copy = false;  // a copy or set
};
struct KernelTable {
  std::vector<KernelRow> rows;  // by total time, longest first (options.all: in time order)
  int64_t gpu_ns = 0;           // the GPU time of every activity shown
  size_t activities = 0;
};
// The rows of step `step` (an index in index.steps(); -1: the whole trace), one per (category, name), or with `all`
// one per activity in time order.
KernelTable kernel_table(const TraceIndex& index, int step, bool all);

// A row's rates and their share of the peak. NaN where there is none. The TFLOP/s are rated against the tensor-core
// peak (peak.tflops) for a kernel that uses them, else against the CUDA cores' FP32 peak (peak.fp32_tflops) where the
// peak has one. A share above 100% means the wrong peak, never a fast kernel: a rate above the FP32 peak is rated
// against the tensor-core peak instead (tflops_note kWhyAboveFp32), and a rate above the highest peak, or GB/s above
// the memory's, gets no % at all (kWhyAbovePeak, kWhyAboveBandwidth). So no % of a datasheet's or a given peak is
// ever above 100. A ceiling a chapter measured (peak.gpu "measured": a copy, a cuBLAS GEMM on the same GPU) is no
// limit, and a kernel that beats it by a little gets its share as it is.
struct KernelRates {
  double gbps, gbps_pct, tflops, tflops_pct, peak_tflops;
  int tflops_note = kWhyNone, gbps_note = kWhyNone;
};
KernelRates kernel_rates(const KernelRow& row, const Peak& peak);

// The footnote a row's "-" or figure points to: the first reason one of its calls had none, or why a column is empty.
int kernel_note(const KernelRow& row);

// The table as typed columns, one row per KernelRow, at full precision. HolisticTraceAnalysis's names where the
// quantity is its get_gpu_kernel_breakdown's (per name: "sum (us)", "max (us)", "min (us)", "stddev" (sample, 0 for
// one call), "mean (us)", "kernel_type": COMMUNICATION, MEMORY or COMPUTATION by HTA's rule), then ours: op,
// category, calls, gpu_pct, bytes, flops, gbps, gbps_pct, tflops, tflops_pct, peak_tflops (what tflops_pct is of),
// tensor_cores ("yes", "no"; "" for a copy or set), rated_calls, note (the footnotes, "; " between).
Table kernel_frame(const KernelTable& table, const Peak& peak);

}  // namespace ladder
