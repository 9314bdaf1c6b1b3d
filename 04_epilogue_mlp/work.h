// What ladder::geglu_gemm does, for the tools that read traces: FLOPs and bytes per call, from the shapes the trace
// recorded. The trace library knows only PyTorch's ops; each chapter registers the op it adds (trace/work.h).
#pragma once

namespace ch04 {

// Registers the formula of "ladder::geglu_gemm" with ladder::op_work. Call once before printing FLOPs or bytes of a
// trace that may hold the op (this chapter's report, ladder-trace); calling again is harmless.
void register_geglu_gemm_work();

}  // namespace ch04
