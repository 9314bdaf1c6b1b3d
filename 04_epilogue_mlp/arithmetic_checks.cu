// The kernels behind arithmetic_checks.h: every input, one thread each, counting the inputs whose two results differ.
#include "04_epilogue_mlp/arithmetic_checks.h"
#include "04_epilogue_mlp/epilogue.cuh"
#include "cuda/check.h"

namespace ch04 {
namespace {

struct Tally {
  unsigned long long differ;
  unsigned long long first;  // lowest differing input, or ~0
  int ran;
};

__device__ bool same_bf16(uint32_t a, uint32_t b) {  // two bf16 bit patterns; NaN equals NaN
  const bool nan_a = (a & 0x7FFF) > 0x7F80, nan_b = (b & 0x7FFF) > 0x7F80;
  return a == b || (nan_a && nan_b);
}

__device__ void count(Tally* t, unsigned long long input) {
  atomicAdd(&t->differ, 1ull);
  atomicMin(&t->first, input);
}

// Thread j checks the inputs 2j (low halves) and 2j + 1 (high halves), j from first_pair on: one bf16x2 multiply.
__global__ void bf16x2_products_kernel(uint64_t first_pair, uint64_t pairs, Tally* t) {
#if __CUDA_ARCH__ >= 900
  const uint64_t j = first_pair + blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  if (j >= first_pair + pairs) return;
  if (j == first_pair) t->ran = 1;
  const uint64_t lo = 2 * j, hi = 2 * j + 1;  // same a, b and b + 1
  const uint32_t a = uint32_t(lo >> 16) | (uint32_t(hi >> 16) << 16);
  const uint32_t b = uint32_t(lo & 0xFFFF) | (uint32_t(hi & 0xFFFF) << 16);
  const uint32_t got = mul_bf16x2(a, b);
  const uint32_t want = pack_bf16x2(__fmul_rn(bf16x2_lo(a), bf16x2_lo(b)), __fmul_rn(bf16x2_hi(a), bf16x2_hi(b)));
  if (!same_bf16(got & 0xFFFF, want & 0xFFFF)) count(t, lo);
  if (!same_bf16(got >> 16, want >> 16)) count(t, hi);
#else
  (void)first_pair, (void)pairs, (void)t;  // no bf16x2 multiply before sm_90: ran stays 0
#endif
}

__global__ void gelu_ftz_kernel(Tally* t) {
  const uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= 65536) return;
  if (n == 0) t->ran = 1;
  const float x = __uint_as_float(n << 16);
  const uint32_t exact = pack_bf16x2(ladder::gelu_tanh_f32(x), 0.0f) & 0xFFFF;
  const uint32_t fast = pack_bf16x2(ladder::gelu_tanh_f32_ftz(x), 0.0f) & 0xFFFF;
  if (!same_bf16(fast, exact)) count(t, n);
}

// Runs launch(tally) (one or more kernels), then reads the tally back.
template <class Launch>
ExhaustiveCheck tally(int64_t inputs, Launch launch) {
  Tally* t = nullptr;
  CUDA_CHECK(cudaMalloc(&t, sizeof(Tally)));
  const Tally zero{0, ~0ull, 0};
  CUDA_CHECK(cudaMemcpy(t, &zero, sizeof(Tally), cudaMemcpyHostToDevice));
  launch(t);
  Tally h{};
  CUDA_CHECK(cudaMemcpy(&h, t, sizeof(Tally), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(t));
  ExhaustiveCheck r;
  r.ran = h.ran != 0;
  r.checked = r.ran ? inputs : 0;
  r.differ = static_cast<int64_t>(h.differ);
  r.first = h.differ ? static_cast<int64_t>(h.first) : -1;
  return r;
}

}  // namespace

ExhaustiveCheck check_bf16x2_products() {
  constexpr uint64_t kPairs = uint64_t(1) << 31, kChunk = uint64_t(1) << 27;  // 2^28 inputs per launch
  return tally(int64_t(1) << 32, [&](Tally* t) {
    for (uint64_t first = 0; first < kPairs; first += kChunk) {
      bf16x2_products_kernel<<<unsigned(kChunk / 256), 256>>>(first, kChunk, t);
      CUDA_CHECK_LAUNCH();
    }
  });
}

ExhaustiveCheck check_gelu_ftz() {
  return tally(65536, [](Tally* t) {
    gelu_ftz_kernel<<<256, 256>>>(t);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace ch04
