// Chapter 03 (fused): y = gelu_tanh(g) * u as one hand-written kernel, like the triton_poi_fused_..._gelu_mul kernel
// torch.compile generates. Eager mode (03_simple_mlp/kernels.cu) runs gelu and mul as two kernels, and the
// intermediate h = gelu(g) makes a full round trip through HBM: gelu writes all of it, mul reads it straight back.
// Here h lives only in registers. `diff` this file with 03_simple_mlp/kernels.cu to see exactly what fusion changes.
//
// The kernel is memory-bound: per element it does a handful of float operations but moves 6 bytes (reads g and u,
// writes y), where eager gelu + mul move 4 + 6 = 10. So "fast" means "moves bytes as fast as a device-to-device copy",
// and everything below is about how the loads and stores are shaped, not about the arithmetic. bench/elementwise.cpp
// times every variant against a copy.
//
// Numbers: each element is computed in float32 and rounded to bf16, like PyTorch's bf16 kernels (its "opmath" type
// for bf16 is float). The GELU itself lives in common/gpu/gelu.cuh, shared with the eager chapter.
#include <fmt/format.h>

#include <cstdint>

#include "03_fused_mlp/kernels.cuh"
#include "cuda/check.h"
#include "gpu/elementwise.cuh"
#include "gpu/gelu.cuh"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch03 {
namespace {

using bf16 = __nv_bfloat16;

using ladder::kBlock;     // 256 threads per block, for every kernel here
using ladder::kVecElems;  // 8 bf16 values in one 16-byte vector (uint4)

// ---------------------------------------------------------------------------------------------------------------
// What one output element is. Every variant below calls these, so all variants give bit-identical results.

// Fusion must not change the numbers: eager mode rounds gelu(g) to bf16 when it stores h, so we round it here too,
// in a register, before multiplying. Skipping that rounding would be (slightly) more accurate, and would break the
// promise that the fused chapter prints exactly what the eager one prints.
__device__ __forceinline__ bf16 gelu_mul_one(bf16 g, bf16 u) {
  const float h = __bfloat162float(__float2bfloat16(ladder::gelu_tanh_f32(__bfloat162float(g))));
  return __float2bfloat16(__fmul_rn(h, __bfloat162float(u)));
}

// The same on a 16-byte vector of 8 bf16 values, two at a time: converting a bf16 pair to float and back are one or
// two instructions each (__floats2bfloat162_rn rounds both halves like __float2bfloat16, to nearest even).
__device__ __forceinline__ uint4 gelu_mul_x8(uint4 g, uint4 u) {
  uint4 out;
  const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&g);
  const __nv_bfloat162* u2 = reinterpret_cast<const __nv_bfloat162*>(&u);
  __nv_bfloat162* out2 = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __bfloat1622float2(g2[i]);
    const float2 h = __bfloat1622float2(  // h rounded to bf16, as eager stores it
        __floats2bfloat162_rn(ladder::gelu_tanh_f32(x.x), ladder::gelu_tanh_f32(x.y)));
    const float2 y = __bfloat1622float2(u2[i]);
    out2[i] = __floats2bfloat162_rn(__fmul_rn(h.x, y.x), __fmul_rn(h.y, y.y));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// "plain": one element per thread, one thread per element. The obvious first kernel, and already correct for any n
// and any alignment. Its weakness is the size of each memory instruction: a warp asks for 32 x 2 = 64 bytes per
// load, so the GPU needs many more instructions (and many more requests in flight) to move the same bytes.
//
// No pointer here is __restrict__, in this kernel or the ones below: the output may be g or u itself (in place, see
// kernels.cuh), and __restrict__ would promise the compiler that it shares no byte with them. In place is safe without
// it, since each element is read only by the thread that then writes it.

__global__ void __launch_bounds__(kBlock) gelu_mul_plain_kernel(const bf16* g, const bf16* u, bf16* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) out[i] = gelu_mul_one(g[i], u[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// "vec*": the fast kernels. Why they look like this:
//  - 16-byte loads and stores (uint4 = 8 bf16): the widest memory instruction a thread has (LDG.E.128/STG.E.128 in
//    the SASS). A warp then moves 512 contiguous bytes per instruction, 8x fewer instructions than "plain".
//  - kVecs independent vectors per thread, all loads issued before the first one is used. DRAM answers after ~1 us,
//    so to stream at ~3 TB/s the GPU must keep megabytes of requests in flight (Little's law: bandwidth x latency).
//    Loads a thread issues back to back overlap; a load whose address depended on an earlier result would not.
//  - Thread t of a block handles vectors t, t + kBlock, t + 2 kBlock, ...: at each step the warp's 32 threads read
//    32 neighbouring vectors, one contiguous 512-byte stretch (coalesced).
//  - No shared memory: no element is used twice, so there is nothing to share. __launch_bounds__(kBlock) tells the
//    compiler the block size, so it can budget registers for a full SM (2048 threads) of these blocks.
//  - The grid: either exactly one pass (enough blocks to cover every vector once: "vec", "vec_x2", "vec_x4") or
//    "persistent" (only as many blocks as fit on the GPU at once, each looping over the tensor with a grid stride).
//    The loop below serves both: with an exact grid it runs once.
//  - The last n % 8 elements do not fill a vector; threads of block 0 do them one element each after the loop.
//  - A 16-byte load needs a 16-byte-aligned address. A tensor from cudaMalloc is aligned (256 bytes), but a view
//    starting at element 1 is not; the launchers check and fall back to the plain kernel rather than fault.
// The default, "vec", keeps one 16-byte vector of g and one of u in flight per thread: with 2048 threads per SM that
// is 64 KiB of requests per SM, enough for Little's law, and each thread does so little that blocks retire quickly and
// the last, partly filled wave is short. The arithmetic (~20 instructions per element, two of them on the
// special-function unit, see common/gpu/gelu.cuh) hides under the memory time. On an H100, bench/elementwise.cpp
// measured it fastest of the variants below (2 or 4 vectors per thread, a persistent grid, streaming cache hints: each
// a little slower), at 97.6% of a same-bytes device-to-device copy
// (bench/results/2026-11-21_h100/bench_elementwise.txt).

template <int kVecs, bool kStream>
__global__ void __launch_bounds__(kBlock) gelu_mul_vec_kernel(const bf16* g, const bf16* u, bf16* out, int64_t n) {
  const int64_t n_vec = n / kVecElems;
  const uint4* g8 = reinterpret_cast<const uint4*>(g);
  const uint4* u8 = reinterpret_cast<const uint4*>(u);
  uint4* out8 = reinterpret_cast<uint4*>(out);
  constexpr int64_t kTile = static_cast<int64_t>(kBlock) * kVecs;  // vectors one block handles per pass
  for (int64_t base = blockIdx.x * kTile + threadIdx.x; base < n_vec; base += gridDim.x * kTile) {
    uint4 in_g[kVecs], in_u[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {  // all loads first: 2 x kVecs requests in flight at once
      if (base + k * kBlock < n_vec) {
        in_g[k] = ladder::load16<kStream>(&g8[base + k * kBlock]);
        in_u[k] = ladder::load16<kStream>(&u8[base + k * kBlock]);
      }
    }
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (base + k * kBlock < n_vec) ladder::store16<kStream>(&out8[base + k * kBlock], gelu_mul_x8(in_g[k], in_u[k]));
    }
  }
  const int64_t i = n_vec * kVecElems + threadIdx.x;  // the tail
  if (blockIdx.x == 0 && i < n) out[i] = gelu_mul_one(g[i], u[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// Launchers. Each takes any n >= 0 and checks its launch; the grid arithmetic is in common/gpu/elementwise.cuh. The
// ops launch on ladder::current_stream(): stream 0, as PyTorch's eager ops do, except while a graph captures a forward.

void launch_gelu_mul_plain(const bf16* g, const bf16* u, bf16* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_mul_plain_kernel<<<ladder::blocks_for(n), kBlock, 0, stream>>>(g, u, out, n);
  CUDA_CHECK_LAUNCH();
}

template <int kVecs, bool kPersistent, bool kStream = false>
void launch_gelu_mul_vec(const bf16* g, const bf16* u, bf16* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (!ladder::aligned16(g) || !ladder::aligned16(u) || !ladder::aligned16(out))
    return launch_gelu_mul_plain(g, u, out, n, stream);
  const int cap = kPersistent ? ladder::resident_blocks<gelu_mul_vec_kernel<kVecs, kStream>>() : 0;
  gelu_mul_vec_kernel<kVecs, kStream><<<ladder::vec_grid(n, kVecs, cap), kBlock, 0, stream>>>(g, u, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

// The variant list: add a line here and the tests and the benchmark pick it up. Keep the names those of the eager
// chapter's lists, so --kernel means the same in both chapters.
const std::vector<GeluMulVariant>& gelu_mul_variants() {
  static const std::vector<GeluMulVariant> variants = {
      {"plain", "one element per thread: 2-byte loads and stores", launch_gelu_mul_plain},
      {"vec", "8 elements per thread: one 16-byte load per input (like PyTorch's vectorized_elementwise_kernel<8>)",
       launch_gelu_mul_vec<1, false>},
      {"vec_x2", "16 elements per thread: four 16-byte loads in flight, one pass over the tensor",
       launch_gelu_mul_vec<2, false>},
      {"vec_x4", "32 elements per thread: eight 16-byte loads in flight, one pass", launch_gelu_mul_vec<4, false>},
      {"vec_persistent", "as vec_x2, but only as many blocks as fit on the GPU at once, looping over the tensor",
       launch_gelu_mul_vec<2, true>},
      {"vec_cs", "as vec, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_gelu_mul_vec<1, false, true>},
      {"vec_x2_cs", "as vec_x2, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_gelu_mul_vec<2, false, true>},
  };
  return variants;
}

const GeluMulVariant& find_gelu_mul_variant(const std::string& name) {
  return ladder::find_variant(gelu_mul_variants(), name, "gelu_mul");
}

void gelu_mul(const ladder::Tensor& g, const ladder::Tensor& u, const ladder::Tensor& out, const std::string& variant) {
  ladder::OpRange range("ladder::gelu_mul", {&g, &u});  // ours: aten has no such op (eager runs two)
  const GeluMulVariant& v = find_gelu_mul_variant(variant);
  ladder::require_flat(ladder::DType::BF16, "gelu_mul", "first input", g, g.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_mul", "second input", u, g.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu_mul", "output", out, g.numel());
  ladder::require_no_partial_overlap("gelu_mul", "the first input", out, g);
  ladder::require_no_partial_overlap("gelu_mul", "the second input", out, u);
  v.launch(g.ptr<bf16>(), u.ptr<bf16>(), out.ptr<bf16>(), g.numel(), ladder::current_stream());
}

}  // namespace ch03
