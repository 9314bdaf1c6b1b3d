// The kernels of a trace as rows: every kernel, copy and set by name (or one row each), with its time and, where the
// trace says how much work it did, its bytes and FLOPs (`ladder-trace kernels` and the chapters lay it out:
// kernels_view.h).
//
// Where the work comes from: a kernel's bytes and FLOPs are its launching op's (trace/analyses/work.h, from the op's
// recorded "Input Dims" and "Input type"), and only when that op launched this one kernel: an op that launched several
// does not say how its work splits between them. A copy or set has its own "bytes" and no FLOPs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/index.h"

namespace ladder {

// Tensor cores, as far as the kernel's name says it (the rule, case-insensitive): "simt" in the name says no; else
// yes for cuBLASLt's nvjet_*, any name with wgmma, hmma, imma, tensorop, cutlass, flash or fmha, the MMA shape tags
// of cuBLAS's older GEMMs (884gemm, 1688gemm, 16816gemm), and xmma_* GEMMs unless their types are plain FP32
// ("f32f32_f32f32_f32" without "tf32": cuBLAS runs those on the FP32 units). Any other name: no (Triton's and
// hand-written kernels do not say, so "no" there means "the name does not say").
bool uses_tensor_cores(const std::string& kernel_name);

// Why a row has no GB/s or TFLOP/s (kernels_view's footnotes, in this order).
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
  kWhyCount
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

}  // namespace ladder
