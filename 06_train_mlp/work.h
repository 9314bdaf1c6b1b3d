// What chapter 06's backward ops do, for the tools that read traces: bytes moved per call, from the shapes the trace
// recorded. The trace library knows only the forward's PyTorch ops; each chapter registers the ops it adds
// (trace/work.h).
#pragma once

namespace ch06 {

// Registers the formulas of "ladder::gelu_mul_backward" (reads dh, g and u, writes dg and du), and of eager autograd's
// "aten::gelu_backward" (reads the gradient and g, writes one tensor) and "aten::add_" (a += b: reads both, writes a)
// with ladder::op_work. Call once before printing bytes of a trace that may hold them; calling again is harmless.
void register_backward_work();

}  // namespace ch06
