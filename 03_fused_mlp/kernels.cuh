// Chapter 03 (fused): the GeGLU MLP's elementwise part, y = gelu_tanh(g) * u, as one hand-written kernel.
//
// The kernel comes in named variants: a name, one line saying what it does, and a launcher. The chapter picks one
// with --kernel NAME; the tests and bench/elementwise.cpp iterate the whole list, so a variant you add to the list in
// kernels.cu is checked against the CPU reference and timed with no other change. The names are those of the eager
// chapter's gelu and mul variants, so --kernel means the same in both chapters.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/tensor.h"
#include "gpu/variants.h"

namespace ch03 {

// out[i] = bf16(float(bf16(gelu_tanh(float(g[i])))) * float(u[i])), i < n: exactly what the eager chapter's gelu
// then mul compute, rounding the intermediate to bf16 where eager stores it, so the outputs are bit-identical.
using GeluMulLaunch = void (*)(const __nv_bfloat16* g, const __nv_bfloat16* u, __nv_bfloat16* out, int64_t n,
                               cudaStream_t stream);
using GeluMulVariant = ladder::Variant<GeluMulLaunch>;

// Every launcher accepts any n >= 0 (n = 0 launches nothing) and pointers at any alignment: a vectorized variant
// handed pointers that are not 16-byte aligned falls back to its plain kernel. The output may be an input itself (in
// place: defined, the kernels mark no pointer __restrict__) but must not overlap one in part (threads would read what
// other threads write); the ops below refuse that with a ladder::Error. Launchers check the launch (CUDA_CHECK_LAUNCH) and do not synchronize.
const std::vector<GeluMulVariant>& gelu_mul_variants();
// Look a variant up by name; an unknown name throws ladder::UsageError listing the valid ones.
const GeluMulVariant& find_gelu_mul_variant(const std::string& name);

// The op the chapter's forward calls in place of gelu + mul, like the fused kernel torch.compile generates. It opens
// a cpu_op range "gelu_mul" with its inputs' shapes, so the kernel it launches on the default stream carries the op's
// External id in the trace. Tensors: bf16, contiguous, same number of elements (else ladder::Error); the output is
// allocated by the caller. `variant` names an entry of the list above.
void gelu_mul(const ladder::Tensor& g, const ladder::Tensor& u, const ladder::Tensor& out,
              const std::string& variant = "vec");

}  // namespace ch03
