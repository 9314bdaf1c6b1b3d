// The FLOPs torch's profiler counts for an op when it records with_flops=True: its "Total FLOPs" column. Torch does
// not write them into the trace (no per-op "flops" arg); it computes them from the op's inputs at profile time
// (torch/csrc/profiler/util.cpp, computeFlops), and so do we, from the "Input Dims" and "Concrete Inputs" that
// record_shapes wrote:
//     aten::mm, aten::addmm           [n, m] x [m, p]: 2 n m p          (addmm: inputs 1 and 2)
//     aten::bmm, aten::baddbmm        [b, n, m] x [b, m, p]: 2 b n m p  (baddbmm: inputs 1 and 2)
//     aten::conv2d                    2 N H_out W_out kh kw C_in C_out / groups, the output's extent from the input's,
//                                     the kernel's, stride, padding and dilation (integer division, as torch's)
//     aten::mul, aten::add            the first input's element count (one FLOP an element, whatever the other)
// Any other op, or shapes that do not fit (torch warns and counts 0): 0.
#pragma once

#include <cstdint>

#include "trace/model/trace.h"

namespace ladder {

// torch's FLOPs of one call of `op` (a cpu_op with recorded shapes); 0 where torch counts none.
double torch_flops(const Event& op);

}  // namespace ladder
