// What ladder::gelu_mul does, for the tools that read traces: bytes moved per call, from the shapes the trace
// recorded. The trace library knows only PyTorch's ops; each chapter registers the op it adds (trace/work.h).
#pragma once

namespace ch03 {

// Registers the formula of "ladder::gelu_mul" with ladder::op_work. Call once before printing bytes of a trace that
// may hold the op (this chapter's report, ladder-trace); calling again is harmless.
void register_gelu_mul_work();

}  // namespace ch03
