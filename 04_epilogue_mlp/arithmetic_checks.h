// Exhaustive checks of the epilogue's cheaper arithmetic (epilogue.cuh, gpu/gelu.cuh), run on the GPU by
// tests/gpu_arithmetic_test.cpp: "fast" may use an instruction only where it gives the same bits as the exact form on
// every input it can see.
#pragma once

#include <cstdint>

namespace ch04 {

struct ExhaustiveCheck {
  bool ran = false;     // false: this build has no code for the current GPU that can run the check (see below)
  int64_t checked = 0;  // inputs tried
  int64_t differ = 0;   // inputs whose two results differ (NaN equals NaN)
  int64_t first = -1;   // the first such input (the lowest), or -1
};

// mul.rn.bf16x2 (sm_90) against bf16(float(a) * float(b)) on all 2^32 pairs of bf16 values (a, b); an input is
// (bits of a) << 16 | (bits of b). One launch per 2^28 pairs. Runs only on compute capability 9.0 and later with code
// built for it (the sm_90 SASS or PTX of the default build); elsewhere returns ran = false.
ExhaustiveCheck check_bf16x2_products();

// gelu_tanh_f32_ftz against gelu_tanh_f32, both rounded to bf16, on all 65536 bf16 inputs (an input is its bits).
ExhaustiveCheck check_gelu_ftz();

}  // namespace ch04
