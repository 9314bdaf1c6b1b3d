// What the ladder's own ops do, for every tool that reads a trace: the FLOPs and bytes of ladder::gelu_mul,
// ladder::geglu_gemm and ladder::gelu_mul_backward per call, from the shapes the trace recorded. The trace library knows only PyTorch's ops
// (trace/analyses/work.h); this room adds ours, so that ladder-trace rates them in any trace (our chapters' and
// PyTorch's traces of chapter 05's ops) and a chapter's report prints them, without either including a chapter.
#pragma once

namespace ladder {

// Registers the formula of every ladder op with ladder::op_work. Call once before printing FLOPs or bytes of a trace
// that may hold them; calling again is harmless.
void register_ladder_ops_work();

}  // namespace ladder
