// The work an op does, derived from the input dims and dtypes torch's record_shapes wrote for it: FLOPs for GEMMs,
// bytes read + written for every op we know. The trace library knows PyTorch's own ops (mm, addmm, matmul, linear,
// add, mul, gelu, with or without "aten::"); an op PyTorch does not define is registered by whoever defines it, with
// register_op_work, so that this library never needs to know another project's op names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

struct Work {
  double flops = 0;
  double bytes = 0;
};

// The work of `op`, a cpu_op with recorded shapes: its name's formula (the registered one, else PyTorch's op of that
// name, "aten::" optional). false if the name is unknown or the shapes do not fit the op (then *work is undefined).
bool op_work(const Event& op, Work* work);

// A formula for the op named `name` (exactly as the trace names it, e.g. "mylib::fused_add"): it returns false when
// the recorded shapes do not fit. A name registered twice keeps the last formula, so registering again is harmless.
// Register before the first op_work call that needs it; registering is not safe beside concurrent op_work calls.
using OpWorkFn = bool (*)(const Event& op, Work* work);
void register_op_work(std::string name, OpWorkFn fn);

// The pieces the formulas are made of, for registered ones too.
// Bytes of one element of a dtype as torch names it in "Input type" ("float", "c10::BFloat16", ...); 0 if unknown.
int64_t dtype_bytes(const std::string& torch_type);
// Elements of a tensor of these dims, in double: dims come from the file, and a product of hostile dims must not
// overflow an int64. A negative dim makes the count negative, which the formulas reject.
double numel(const std::vector<int64_t>& dims);
// A GEMM C[m,n] = A[m,k] @ B[k,n]: 2*m*n*k FLOPs, `read_bytes` read once and C (m*n elements of `out_elem_bytes`)
// written once, the least traffic any kernel can have. false for an empty or negative extent or a non-finite count.
bool gemm_work(double m, double n, double k, double read_bytes, double out_elem_bytes, Work* work);
// An elementwise op: every tensor input read once, one output as large as the largest input (dtype of the first)
// written once; no FLOPs (these ops are about memory).
bool elementwise_work(const Event& op, Work* work);

}  // namespace ladder
