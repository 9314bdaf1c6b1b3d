// Chapter 03 (eager): the two hand-written elementwise kernels of the GeGLU MLP, h = gelu_tanh(g) and y = h * u.
//
// Each kernel comes in named variants: a name, one line saying what it does, and a launcher. The chapter picks one
// with --kernel NAME; the tests and bench/elementwise.cpp iterate the whole list, so a variant you add to the list in
// kernels.cu is checked against the CPU reference and timed with no other change. gelu and mul have the same variant
// names, so one --kernel option picks both.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/tensor.h"
#include "gpu/variants.h"

namespace ch03 {

// h[i] = bf16(gelu_tanh(float(g[i]))), i < n.
using GeluLaunch = void (*)(const __nv_bfloat16* g, __nv_bfloat16* h, int64_t n, cudaStream_t stream);
using GeluVariant = ladder::Variant<GeluLaunch>;
// out[i] = bf16(float(a[i]) * float(b[i])), i < n.
using MulLaunch = void (*)(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, int64_t n,
                           cudaStream_t stream);
using MulVariant = ladder::Variant<MulLaunch>;

// Every launcher accepts any n >= 0 (n = 0 launches nothing) and pointers at any alignment: a vectorized variant
// handed pointers that are not 16-byte aligned falls back to its plain kernel. The output may be an input itself (in
// place: defined, the kernels mark no pointer __restrict__) but must not overlap one in part (threads would read what
// other threads write); the ops below refuse that with a ladder::Error. Launchers check the launch (CUDA_CHECK_LAUNCH) and do not synchronize.
const std::vector<GeluVariant>& gelu_variants();
const std::vector<MulVariant>& mul_variants();
// Look a variant up by name; an unknown name throws ladder::UsageError listing the valid ones.
const GeluVariant& find_gelu_variant(const std::string& name);
const MulVariant& find_mul_variant(const std::string& name);

// The ops the chapter's forward calls, like aten::gelu(g, approximate="tanh") and aten::mul(a, b). Each opens a cpu_op
// range ("gelu", "mul") with its inputs' shapes, so the kernel it launches on the default stream carries the op's
// External id in the trace. Tensors: bf16, contiguous, same number of elements (else ladder::Error); outputs are
// allocated by the caller. `variant` names an entry of the lists above.
void gelu(const ladder::Tensor& g, const ladder::Tensor& h, const std::string& variant = "vec");
void mul(const ladder::Tensor& a, const ladder::Tensor& b, const ladder::Tensor& out,
         const std::string& variant = "vec");

}  // namespace ch03
