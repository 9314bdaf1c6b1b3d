// Chapter 03 (eager): h = gelu_tanh(g) and y = h * u as two hand-written kernels, like PyTorch's eager mode, where
// each op is its own kernel and the intermediate h makes a full round trip through HBM: gelu writes all of it, mul
// reads it straight back. 03_fused_mlp/kernels.cu does both in one kernel; `diff` the two files to see exactly what
// fusion changes.
//
// Both kernels are memory-bound: per element they do a handful of float operations but move 4 (gelu) or 6 (mul)
// bytes. So "fast" means "moves bytes as fast as a device-to-device copy", and everything below is about how the
// loads and stores are shaped, not about the arithmetic. bench/elementwise.cpp times every variant against a copy.
//
// Numbers: each element is computed in float32 and rounded to bf16 once, like PyTorch's bf16 kernels (its "opmath"
// type for bf16 is float). The GELU itself lives in common/gpu/gelu.cuh, shared with the fused chapter.
#include <fmt/format.h>

#include <cstdint>

#include "03_simple_mlp/kernels.cuh"
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

__device__ __forceinline__ bf16 gelu_one(bf16 g) {
  return __float2bfloat16(ladder::gelu_tanh_f32(__bfloat162float(g)));
}

// A product of two bf16 values is exact in float32 (8 + 8 significant bits fit in 24), so rounding it to bf16 once
// gives the correctly rounded bf16 product, the same as PyTorch's mul.
__device__ __forceinline__ bf16 mul_one(bf16 a, bf16 b) {
  return __float2bfloat16(__fmul_rn(__bfloat162float(a), __bfloat162float(b)));
}

// The same on a 16-byte vector of 8 bf16 values, two at a time: converting a bf16 pair to float and back are one or
// two instructions each (__floats2bfloat162_rn rounds both halves like __float2bfloat16, to nearest even).
__device__ __forceinline__ uint4 gelu_x8(uint4 g) {
  uint4 h;
  const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&g);
  __nv_bfloat162* h2 = reinterpret_cast<__nv_bfloat162*>(&h);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __bfloat1622float2(g2[i]);
    h2[i] = __floats2bfloat162_rn(ladder::gelu_tanh_f32(x.x), ladder::gelu_tanh_f32(x.y));
  }
  return h;
}

__device__ __forceinline__ uint4 mul_x8(uint4 a, uint4 b) {
  uint4 out;
  const __nv_bfloat162* a2 = reinterpret_cast<const __nv_bfloat162*>(&a);
  const __nv_bfloat162* b2 = reinterpret_cast<const __nv_bfloat162*>(&b);
  __nv_bfloat162* out2 = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __bfloat1622float2(a2[i]);
    const float2 y = __bfloat1622float2(b2[i]);
    out2[i] = __floats2bfloat162_rn(__fmul_rn(x.x, y.x), __fmul_rn(x.y, y.y));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// "plain": one element per thread, one thread per element. The obvious first kernel, and already correct for any n
// and any alignment. Its weakness is the size of each memory instruction: a warp asks for 32 x 2 = 64 bytes per
// load, so the GPU needs many more instructions (and many more requests in flight) to move the same bytes.
//
// No pointer here is __restrict__, in these kernels or the ones below: the output may be an input itself (in place, see
// kernels.cuh), and __restrict__ would promise the compiler that it shares no byte with them. In place is safe without
// it, since each element is read only by the thread that then writes it.

__global__ void __launch_bounds__(kBlock) gelu_plain_kernel(const bf16* g, bf16* h, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) h[i] = gelu_one(g[i]);
}

__global__ void __launch_bounds__(kBlock) mul_plain_kernel(const bf16* a, const bf16* b, bf16* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) out[i] = mul_one(a[i], b[i]);
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
// The default, "vec", keeps one 16-byte vector per input in flight per thread (one for gelu, two for mul: a and b):
// with 2048 threads per SM that is 32-64 KiB of requests per SM, enough for Little's law, and each thread does so
// little that blocks retire quickly and the last, partly filled wave is short. gelu's arithmetic (~20 instructions per
// element, two of them on the special-function unit, see common/gpu/gelu.cuh) hides under the memory time. On an H100,
// bench/elementwise.cpp measured gelu's "vec" at 99.5% and mul's at 98.2% of a same-bytes device-to-device copy
// (bench/results/2026-11-21_h100/bench_elementwise.txt); the
// other variants below (2 or 4 vectors per thread, a persistent grid, streaming cache hints) are within a few percent.

template <int kVecs, bool kStream>
__global__ void __launch_bounds__(kBlock) gelu_vec_kernel(const bf16* g, bf16* h, int64_t n) {
  const int64_t n_vec = n / kVecElems;
  const uint4* g8 = reinterpret_cast<const uint4*>(g);
  uint4* h8 = reinterpret_cast<uint4*>(h);
  constexpr int64_t kTile = static_cast<int64_t>(kBlock) * kVecs;  // vectors one block handles per pass
  for (int64_t base = blockIdx.x * kTile + threadIdx.x; base < n_vec; base += gridDim.x * kTile) {
    uint4 in[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {  // all loads first: kVecs requests in flight at once
      if (base + k * kBlock < n_vec) in[k] = ladder::load16<kStream>(&g8[base + k * kBlock]);
    }
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (base + k * kBlock < n_vec) ladder::store16<kStream>(&h8[base + k * kBlock], gelu_x8(in[k]));
    }
  }
  const int64_t i = n_vec * kVecElems + threadIdx.x;  // the tail
  if (blockIdx.x == 0 && i < n) h[i] = gelu_one(g[i]);
}

template <int kVecs, bool kStream>
__global__ void __launch_bounds__(kBlock) mul_vec_kernel(const bf16* a, const bf16* b, bf16* out, int64_t n) {
  const int64_t n_vec = n / kVecElems;
  const uint4* a8 = reinterpret_cast<const uint4*>(a);
  const uint4* b8 = reinterpret_cast<const uint4*>(b);
  uint4* out8 = reinterpret_cast<uint4*>(out);
  constexpr int64_t kTile = static_cast<int64_t>(kBlock) * kVecs;  // vectors one block handles per pass
  for (int64_t base = blockIdx.x * kTile + threadIdx.x; base < n_vec; base += gridDim.x * kTile) {
    uint4 in_a[kVecs], in_b[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {  // all loads first: 2 x kVecs requests in flight at once
      if (base + k * kBlock < n_vec) {
        in_a[k] = ladder::load16<kStream>(&a8[base + k * kBlock]);
        in_b[k] = ladder::load16<kStream>(&b8[base + k * kBlock]);
      }
    }
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (base + k * kBlock < n_vec) ladder::store16<kStream>(&out8[base + k * kBlock], mul_x8(in_a[k], in_b[k]));
    }
  }
  const int64_t i = n_vec * kVecElems + threadIdx.x;  // the tail
  if (blockIdx.x == 0 && i < n) out[i] = mul_one(a[i], b[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// Launchers. Each takes any n >= 0 and checks its launch; the grid arithmetic is in common/gpu/elementwise.cuh. The
// ops launch on ladder::current_stream(): stream 0, as PyTorch's eager ops do, except while a graph captures a forward.

void launch_gelu_plain(const bf16* g, bf16* h, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  gelu_plain_kernel<<<ladder::blocks_for(n), kBlock, 0, stream>>>(g, h, n);
  CUDA_CHECK_LAUNCH();
}

template <int kVecs, bool kPersistent, bool kStream = false>
void launch_gelu_vec(const bf16* g, bf16* h, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (!ladder::aligned16(g) || !ladder::aligned16(h)) return launch_gelu_plain(g, h, n, stream);
  const int cap = kPersistent ? ladder::resident_blocks<gelu_vec_kernel<kVecs, kStream>>() : 0;
  gelu_vec_kernel<kVecs, kStream><<<ladder::vec_grid(n, kVecs, cap), kBlock, 0, stream>>>(g, h, n);
  CUDA_CHECK_LAUNCH();
}

void launch_mul_plain(const bf16* a, const bf16* b, bf16* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  mul_plain_kernel<<<ladder::blocks_for(n), kBlock, 0, stream>>>(a, b, out, n);
  CUDA_CHECK_LAUNCH();
}

template <int kVecs, bool kPersistent, bool kStream = false>
void launch_mul_vec(const bf16* a, const bf16* b, bf16* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (!ladder::aligned16(a) || !ladder::aligned16(b) || !ladder::aligned16(out))
    return launch_mul_plain(a, b, out, n, stream);
  const int cap = kPersistent ? ladder::resident_blocks<mul_vec_kernel<kVecs, kStream>>() : 0;
  mul_vec_kernel<kVecs, kStream><<<ladder::vec_grid(n, kVecs, cap), kBlock, 0, stream>>>(a, b, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

// The variant lists: add a line here and the tests and the benchmark pick it up. Keep the names of the two lists
// the same, since the chapter's --kernel option picks a gelu and a mul variant by one name.
const std::vector<GeluVariant>& gelu_variants() {
  static const std::vector<GeluVariant> variants = {
      {"plain", "one element per thread: 2-byte loads and stores", launch_gelu_plain},
      {"vec", "8 elements per thread: one 16-byte load and store (like PyTorch's vectorized_elementwise_kernel<8>)",
       launch_gelu_vec<1, false>},
      {"vec_x2", "16 elements per thread: two 16-byte loads in flight, one pass over the tensor",
       launch_gelu_vec<2, false>},
      {"vec_x4", "32 elements per thread: four 16-byte loads in flight, one pass", launch_gelu_vec<4, false>},
      {"vec_persistent", "as vec_x2, but only as many blocks as fit on the GPU at once, looping over the tensor",
       launch_gelu_vec<2, true>},
      {"vec_cs", "as vec, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_gelu_vec<1, false, true>},
      {"vec_x2_cs", "as vec_x2, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_gelu_vec<2, false, true>},
  };
  return variants;
}

const std::vector<MulVariant>& mul_variants() {
  static const std::vector<MulVariant> variants = {
      {"plain", "one element per thread: 2-byte loads and stores", launch_mul_plain},
      {"vec", "8 elements per thread: one 16-byte load per input (like PyTorch's vectorized_elementwise_kernel<8>)",
       launch_mul_vec<1, false>},
      {"vec_x2", "16 elements per thread: four 16-byte loads in flight, one pass over the tensor",
       launch_mul_vec<2, false>},
      {"vec_x4", "32 elements per thread: eight 16-byte loads in flight, one pass", launch_mul_vec<4, false>},
      {"vec_persistent", "as vec_x2, but only as many blocks as fit on the GPU at once, looping over the tensor",
       launch_mul_vec<2, true>},
      {"vec_cs", "as vec, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_mul_vec<1, false, true>},
      {"vec_x2_cs", "as vec_x2, with streaming cache hints (__ldcs/__stcs: lines evicted first)",
       launch_mul_vec<2, false, true>},
  };
  return variants;
}

const GeluVariant& find_gelu_variant(const std::string& name) {
  return ladder::find_variant(gelu_variants(), name, "gelu");
}
const MulVariant& find_mul_variant(const std::string& name) {
  return ladder::find_variant(mul_variants(), name, "mul");
}

void gelu(const ladder::Tensor& g, const ladder::Tensor& h, const std::string& variant) {
  ladder::OpRange range("aten::gelu", {&g});  // its checks and its launch happen inside the range
  const GeluVariant& v = find_gelu_variant(variant);
  ladder::require_flat(ladder::DType::BF16, "gelu", "input", g, g.numel());
  ladder::require_flat(ladder::DType::BF16, "gelu", "output", h, g.numel());
  ladder::require_no_partial_overlap("gelu", "the input", h, g);
  v.launch(g.ptr<bf16>(), h.ptr<bf16>(), g.numel(), ladder::current_stream());
}

void mul(const ladder::Tensor& a, const ladder::Tensor& b, const ladder::Tensor& out, const std::string& variant) {
  ladder::OpRange range("aten::mul", {&a, &b});
  const MulVariant& v = find_mul_variant(variant);
  ladder::require_flat(ladder::DType::BF16, "mul", "first input", a, a.numel());
  ladder::require_flat(ladder::DType::BF16, "mul", "second input", b, a.numel());
  ladder::require_flat(ladder::DType::BF16, "mul", "output", out, a.numel());
  ladder::require_no_partial_overlap("mul", "the first input", out, a);
  ladder::require_no_partial_overlap("mul", "the second input", out, b);
  v.launch(a.ptr<bf16>(), b.ptr<bf16>(), out.ptr<bf16>(), a.numel(), ladder::current_stream());
}

}  // namespace ch03
