// The work formulas of the ladder's own ops, those PyTorch has no counterpart for (ladder::gelu_mul of 03_fused_mlp,
// ladder::geglu_gemm of 04_epilogue_mlp), for op_work (trace/work.h). Programs that print bytes or FLOPs of our
// traces call it once before; the trace library itself never does, so it stays free of the ladder's names.
#pragma once

namespace ladder {

void register_ladder_ops_work();

}  // namespace ladder
