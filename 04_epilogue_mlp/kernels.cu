// Chapter 04: m = gelu_tanh(x @ W_gate^T) * (x @ W_up^T) as one hand-written Hopper (sm_90a) GEMM.
//
// THE IDEA. Chapter 03 ran the GeGLU MLP's first half as three kernels: cuBLAS computed g = x @ W_gate^T and
// u = x @ W_up^T (each written to HBM as bf16), then gelu_mul read both back and wrote m. Here one GEMM computes g and
// u for the same output tile at once and the epilogue, still holding them in registers, writes only m.
//
// HOW g AND u MEET IN ONE THREAD. wgmma (the Hopper warpgroup matrix instruction) multiplies a 64-row tile of x by a
// tile of N weight rows and leaves a 64 x N float32 accumulator spread over the 128 threads of a warpgroup. Its
// layout: thread t holds rows {r, r + 8} (r = 16 * warp + lane / 4) and, in every group of 8 columns, the two
// columns {2 * (lane % 4), 2 * (lane % 4) + 1}. So every thread holds the SAME column positions in every 8-column
// group. Now stack the weight tile: its first N/2 rows are rows [n0, n0 + N/2) of W_gate, its last N/2 rows are the
// same rows of W_up (two TMA loads into one shared-memory tile; W_gate and W_up stay as nn.Linear stores them). Then
// accumulator column c < N/2 is g[:, n0 + c] and column c + N/2 is u[:, n0 + c], and both are in the same thread,
// in registers acc[i] and acc[i + N/4]. The epilogue computes gelu(g) * u register to register; the result has the
// layout of a 64 x N/2 accumulator and is stored like any GEMM output. (See gate_times_up below.)
//
// THE MACHINERY, common to all kernels (each instruction is wrapped in a small helper below, with why):
//  - TMA (cp.async.bulk.tensor): the copy engine moves whole 2-D tiles global -> shared, zero-filling rows and columns
//    past the matrix edges, and shared -> global for the output, clipping at the edges. So no bounds checks in the
//    kernels: any M, any dim and hidden that are multiples of 8 (TMA's 16-byte row rule) just work.
//  - mbarriers: a "full" barrier per pipeline stage (TMA says: the bytes have landed) and an "empty" one (the math
//    says: I am done reading this stage, refill it).
//  - Warp specialization: a producer warp only issues TMA loads; consumer warpgroups only issue wgmma and run the
//    epilogue. They meet only at the barriers, so loads for later k-tiles run while the tensor cores work.
//  - 128-byte swizzle: TMA writes each 64-element (128-byte) row of a tile with its 16-byte chunks XOR-permuted by the
//    row index (mod 8), which is the layout wgmma's shared-memory descriptors read without bank conflicts, and the one
//    our epilogue writes so that the TMA store can read it back.
//
// THE VARIANTS, in the order a reader should meet them (dev/NOTES.md has every measurement; H100 SXM, M = 8192,
// dim = 768, hidden = 3072, L2 flushed, against 114-118 us for cuBLAS on the concatenated [2 * hidden, dim] weight):
//  - "teach" (~173 us): one 64 x 128 tile of m per block, one consumer warpgroup, one producer warp. While the
//    consumer runs the epilogue the block's tensor cores idle, and nothing else runs on the SM.
//  - "pingpong" (~141 us): a persistent grid, one block per SM looping over 128 x 64 tiles; two consumer warpgroups
//    take turns on the tensor cores, so one's epilogue runs during the other's main loop. The classic way to hide an
//    epilogue, and it did not hide this one: see "what limits" below.
//  - "coop" (~123-131 us): both consumer warpgroups on one 128 x 128 tile (each wgmma m64n256: 64 rows, 128 gate +
//    128 up columns). Twice the math per byte brought into shared memory, so the main loop alone runs faster than
//    cuBLAS (~106 us with the epilogue stripped, an experiment); the epilogue runs with the tensor cores idle.
//  - "overlap" (~125-129 us): as coop, but each consumer runs the previous tile's epilogue in 8 chunks between the
//    wgmma of its next tile's first k-tiles (the same warp, so the wgmma are always issued first).
//  - "fast" (~122-125 us, 1.03-1.09 x cuBLAS over the runs; 1.02 x in back-to-back use): overlap with the cheapest
//    exact epilogue arithmetic: the GELU's two special-function instructions in their flush-to-zero forms and the
//    final multiply as one bf16x2 instruction, both proven to give the very same bits on every possible input
//    (tests/gpu_kernels_test.cpp tries all 65536 GELU inputs; the dev harness tried all 2^32 bf16 products).
// WHAT LIMITS. Nsight Compute: with the epilogue stripped the tensor pipe is ~84% busy; the real epilogue adds ~2100
// (overlap) to ~2500 (coop) SM cycles per 128 x 128 tile, about the time its 2 special-function instructions per
// output (MUFU.EX2 and MUFU.RCP, 16 per cycle per SM) need, whether or not wgmma run meanwhile. Our reading: those
// instructions, not the ordinary arithmetic, are what interleaving cannot hide. And in steady use the H100 sits at its
// 700 W power cap with or without the epilogue (clocks ~1.55 GHz), so every extra instruction also costs clock speed.
//
// Tensor maps are made with cuTensorMapEncodeTiled, which lives in the driver library (libcuda). We fetch it through
// the runtime's cudaGetDriverEntryPointByVersion, so nothing here links libcuda directly: the program links only the
// CUDA runtime, like every other chapter.
//
// Build: nvcc -std=c++17 -O3 -lineinfo -gencode arch=compute_90a,code=sm_90a (sm_90a, not sm_90: wgmma and
// setmaxnreg exist only in the "a" target; plain -arch=sm_90a also emits compute_90 PTX, which ptxas rejects).

#include <cuda.h>          // CUtensorMap and its enums (types only: we do not link libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000, the driver function's type

#include <climits>
#include <cstring>
#include <string>
#include <tuple>

#include "04_epilogue_mlp/kernels.cuh"
#include "chapter/paths.h"
#include "cuda/check.h"
#include "gpu/ops.h"
#include "gpu/stream.h"

namespace ch04 {
namespace {

using bf16 = __nv_bfloat16;

// ---------------------------------------------------------------------------------------------------------------
// Geometry shared by both kernels.

constexpr int kBK = 64;             // k extent of one pipeline stage: 64 bf16 = 128 bytes = one swizzled row
constexpr int kRowBytes = kBK * 2;  // bytes of one tile row in shared memory
constexpr int kWarpgroup = 128;     // threads of a warpgroup: 4 consecutive warps, the unit that issues wgmma
constexpr int kStoreCols = 64;      // output columns per TMA store box: 64 bf16 = 128 bytes, the swizzle width

// ---------------------------------------------------------------------------------------------------------------
// PTX helpers. Each wraps one instruction (or a tiny fixed sequence) so the kernels read as steps.

// The 32-bit shared-memory address of a pointer into shared memory: what every PTX instruction on shared memory
// (mbarrier, TMA, stmatrix, wgmma descriptors) takes.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Set up an mbarrier that completes a phase after `count` arrivals (plus, for TMA, the bytes announced with
// expect_tx). One thread does this before anyone uses the barrier.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

// Make the barrier initializations visible to the copy engine (the "async proxy") before any TMA arrives on them;
// the __syncthreads that follows makes them visible to the other threads.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Producer: count one arrival on `bar` and announce that TMA will deliver `bytes` more bytes to it. The phase
// completes only when both have happened, so the consumer's wait returns once the whole stage has landed.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

// One arrival on `bar`, with release semantics: our earlier reads of the stage happen before the producer, which
// waits on this barrier, overwrites it.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// True once the phase with parity `parity` of `bar` has completed. A barrier only remembers the parity of its current
// phase, so waiters must never fall two phases behind; the pipelines below are built so they cannot.
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Block until that phase has completed (try_wait itself sleeps a little in hardware before giving up, so this loop
// does not hammer the barrier).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// Fetch a tensor map (a __grid_constant__ kernel parameter) into the TMA unit's cache ahead of its first use.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// TMA load: copy the box of `map` whose first element is at (column c0, row c1) into shared memory at `dst`, and
// count its bytes on `bar`. Elements past the tensor's edges arrive as zeros (and still count), which is how the
// kernels handle every tail: a zero row of x or of a weight adds nothing to any dot product.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::
          "r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// TMA store: copy the box at `src` in shared memory to the tensor at (column c0, row c1). The parts of the box past
// the tensor's edges are not written: that is the clipping of the last row and column tiles.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(smem_u32(src)), "r"(c0), "r"(c1)
               : "memory");
}

// Close the group of TMA stores issued so far by this thread, so they can be waited for as one.
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Wait until at most N committed store groups of this thread still READ shared memory: after this the staging
// buffer may be overwritten, though the global writes may still be on their way.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Wait until at most N committed store groups of this thread are unfinished (writes done too). Used before exit.
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Order this thread's ordinary shared-memory writes (stmatrix) before later reads by the copy engine (the TMA store).
// Each writing thread fences; a barrier among the writers then lets one thread issue the store.
__device__ __forceinline__ void fence_view_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Barrier among `threads` threads only (one warpgroup), so the two consumer warpgroups never wait for each other
// (and never for the producer, which may have finished). ID 0 is __syncthreads's; we use 1 and 2.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Warp specialization of registers: the producer warpgroup needs few registers, the consumers many (128 accumulator
// floats each). setmaxnreg moves registers from one warpgroup to the others at run time; every thread of the
// warpgroup executes it. The kernel must be launched with a register cap (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// wgmma reads its accumulator registers asynchronously. Before the first wgmma of a batch, this fence orders earlier
// register and shared-memory accesses of the warpgroup before the tensor cores' own.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Close the batch of wgmma issued so far, so it can be waited for as one group.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// Wait until at most N committed wgmma groups are still running. wait<1> after committing k-tile t means k-tile t-1
// is done, so its stage can be handed back while k-tile t still runs.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// The compiler does not know that wgmma writes the accumulators later, at wgmma_wait_group; this empty asm, which
// "reads and writes" every accumulator register, keeps it from moving any use of them across the wait.
template <int kRows, int kCols>
__device__ __forceinline__ void pin_accumulators(float (&acc)[kRows][kCols]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < kCols; ++c) asm volatile("" : "+f"(acc[r][c])::"memory");
}

// A wgmma shared-memory matrix descriptor for a K-major tile written by TMA with the 128-byte swizzle: rows of
// 64 bf16 (128 bytes), 8-row groups 1024 bytes apart. Fields (PTX ISA, "matrix descriptor"): start address / 16 in
// bits 0-13; leading-dimension byte offset / 16 in bits 16-29 (unused for swizzled K-major tiles; 1 by convention);
// stride-dimension byte offset / 16 in bits 32-45 (1024: from one 8-row group to the next); swizzle mode in bits
// 62-63 (1 = 128-byte). Stepping k by 16 inside the 64-wide row is a plain +32 bytes on the start address: the
// hardware applies the swizzle to the final address, which is why tile bases must be 1024-byte aligned.
__device__ __forceinline__ uint64_t sw128_kmajor_desc(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// D[64 x N] (+)= A[64 x 16] * B[16 x N] on the tensor cores, bf16 in, float32 accumulate, A and B both read from
// shared memory through descriptors, both K-major (x rows and weight rows have k contiguous, so no transposes: the
// trailing "1, 1, 0, 0" are scale-a, scale-b, transpose-a, transpose-b). `accumulate` == 0 makes it D = A * B, which
// spares zeroing 64-128 registers at every tile's start. The register list is the accumulator fragment described at
// the top of this file: d[i] holds row 16 * warp + lane / 4 + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2 * (lane % 4)
// + i % 2.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
        "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// Stores four 8 x 8 bf16 matrices to shared memory in one instruction. In each matrix, lane l holds the two values of
// row l / 4, columns 2 * (l % 4) and 2 * (l % 4) + 1, packed in one 32-bit register: exactly how an accumulator
// fragment holds each 8-column group, so no shuffles are needed. Lanes 8k..8k+7 give the row addresses of matrix k.
// One stmatrix.x4 replaces four 32-bit stores per thread.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// ---------------------------------------------------------------------------------------------------------------
// The epilogue's arithmetic: eager PyTorch's, rounding for rounding.

// GELU, tanh approximation, in float32. This MUST stay equal to ladder::gelu_tanh_f32 in common/gpu/gelu.cuh, the
// function chapter 03's gelu and gelu_mul kernels inline: same constants, same operations, every rounding pinned by
// an intrinsic, so this chapter's outputs can match the earlier chapters' bit for bit. gelu.cuh explains the form
// (x / (1 + exp(-2 * inner)) instead of 0.5 * x * (1 + tanh(inner))). tests/gpu_kernels_test.cpp compares every variant
// with an eager path that calls the common/ function itself, on all 65536 possible inputs.
constexpr float kGeluBeta = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluKappa = 0.044715f;
constexpr float kMinusTwoLog2e = -2.8853900817779268f;  // exp(-2z) = 2^(z * -2 * log2(e))
__device__ __forceinline__ float gelu_tanh_f32(float x) {
  const float x_cube = __fmul_rn(__fmul_rn(x, x), x);
  const float inner = __fmul_rn(kGeluBeta, __fmaf_rn(kGeluKappa, x_cube, x));
  const float e = exp2f(__fmul_rn(inner, kMinusTwoLog2e));
  return __fdividef(x, __fadd_rn(1.0f, e));
}

// 2^x by the special-function unit in its flush-to-zero form: one MUFU.EX2. exp2f is the same MUFU.EX2 plus 3
// instructions that keep results below 2^-126 exact (denormal); here such an e is added to 1.0f, where it vanishes
// either way.
__device__ __forceinline__ float ex2_ftz(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// 1/x by the special-function unit, flush-to-zero form: one MUFU.RCP. __fdividef(x, y) is x times this plus range
// handling for huge y.
__device__ __forceinline__ float rcp_ftz(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// The same GELU, the same operations in the same order, with the two special functions in their cheaper
// flush-to-zero forms. Not the same float32 bits on every input (denormal corners differ), but the same bf16 after
// rounding on every one of the 65536 inputs the epilogue can see (g is rounded to bf16 first): checked exhaustively.
__device__ __forceinline__ float gelu_tanh_f32_ftz(float x) {
  const float x_cube = __fmul_rn(__fmul_rn(x, x), x);
  const float inner = __fmul_rn(kGeluBeta, __fmaf_rn(kGeluKappa, x_cube, x));
  const float e = ex2_ftz(__fmul_rn(inner, kMinusTwoLog2e));
  return __fmul_rn(x, rcp_ftz(__fadd_rn(1.0f, e)));
}

// bf16 pairs packed in 32 bits (low half = left column), the form F2FP makes, stmatrix stores and TMA moves. Turning
// a half back into a float32 is one integer instruction: a bf16 is the top 16 bits of the float with the same value.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {  // both rounded to nearest even
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
}
__device__ __forceinline__ float bf16x2_lo(uint32_t p) { return __uint_as_float(p << 16); }
__device__ __forceinline__ float bf16x2_hi(uint32_t p) { return __uint_as_float(p & 0xFFFF0000u); }

// h * u for two bf16 pairs at once, rounded to nearest even, in one instruction (sm_90's bf16x2 multiply). The
// product of two bf16 values has at most 16 significant bits, so float32 holds it exactly and bf16(float(h) *
// float(u)) rounds the same exact product once: the same result as the float32 multiply for 3 fewer instructions per
// pair (no unpacking, one multiply, no repacking). The dev harness tested all 2^32 pairs (dev/results/final_*).
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t r;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// Two adjacent outputs from a pair of g values and the pair of u values of the same columns, each pair already
// rounded to bf16 (as eager's two GEMMs store g and u): gelu(g) rounded to bf16 (as eager's gelu stores it), times u,
// rounded to bf16 (as eager's mul stores it). Returns the output pair packed. kFastMath picks the cheaper instructions
// described above; the results are the same bits.
template <bool kFastMath>
__device__ __forceinline__ uint32_t gelu_times_up_bf16x2(uint32_t g, uint32_t u) {
  if constexpr (kFastMath) {
    const uint32_t h = pack_bf16x2(gelu_tanh_f32_ftz(bf16x2_lo(g)), gelu_tanh_f32_ftz(bf16x2_hi(g)));
    return mul_bf16x2(h, u);
  } else {
    const uint32_t h = pack_bf16x2(gelu_tanh_f32(bf16x2_lo(g)), gelu_tanh_f32(bf16x2_hi(g)));
    return pack_bf16x2(__fmul_rn(bf16x2_lo(h), bf16x2_lo(u)), __fmul_rn(bf16x2_hi(h), bf16x2_hi(u)));
  }
}

// THE PAIRING. acc[b] is the fragment of one m64nN wgmma over a stacked weight tile (N/2 gate rows, then N/2 up
// rows). Register i < N/4 holds a gate column c = 8 * (i / 4) + 2 * (lane % 4) + i % 2; register i + N/4 holds column
// c + N/2 of the same row: the up value of the same hidden unit. So gelu(g) * u is register to register, and out[b]
// (N/8 packed pairs) has the layout of an m64n(N/2) fragment: out[b][2j + h] holds row 16 * warp + lane / 4 + 8 * h,
// columns 8j + 2 * (lane % 4) + {0, 1}. g and u are rounded to bf16 first, as eager's GEMMs store them.
template <int kMBlocks, int kN, bool kFastMath = false>
__device__ __forceinline__ void gate_times_up(const float (&acc)[kMBlocks][kN / 2], uint32_t (&out)[kMBlocks][kN / 8]) {
  constexpr int kUp = kN / 4;  // first register of the up half
#pragma unroll
  for (int b = 0; b < kMBlocks; ++b)
#pragma unroll
    for (int i = 0; i < kN / 4; i += 2)
      out[b][i / 2] = gelu_times_up_bf16x2<kFastMath>(pack_bf16x2(acc[b][i], acc[b][i + 1]),
                                                      pack_bf16x2(acc[b][kUp + i], acc[b][kUp + i + 1]));
}

// Writes a warpgroup's finished outputs (kMBlocks x 64 rows, kN/2 columns) into the staging tile at `tile`, in the
// layout the TMA store reads: panels of 64 columns (128 bytes per row, the swizzle width), each panel kMBlocks * 64
// rows, rows 128 bytes apart, the 16-byte chunk j of row r stored at chunk j ^ (r % 8) (the 128-byte swizzle; the tile
// must be 1024-byte aligned). The swizzle also makes the stores conflict-free: the 8 rows of one 8 x 8 matrix land in
// 8 different chunk positions, so in 8 different groups of banks.
template <int kMBlocks, int kN>
__device__ __forceinline__ void stage_outputs(const uint32_t (&out)[kMBlocks][kN / 8], uint32_t tile, int thread) {
  constexpr int kPanelBytes = kMBlocks * 64 * 128;
  const int warp = thread / 32, lane = thread % 32;
  const int matrix = lane / 8, row_in_matrix = lane % 8;  // whose row address this lane gives in each stmatrix.x4
#pragma unroll
  for (int b = 0; b < kMBlocks; ++b) {
#pragma unroll
    for (int j = 0; j < kN / 16; j += 2) {  // column groups j and j + 1, top and bottom 8 rows each: 4 matrices
      const int row = 64 * b + 16 * warp + 8 * (matrix & 1) + row_in_matrix;
      const int group = j + (matrix >> 1);
      const uint32_t addr = tile + (group / 8) * kPanelBytes + row * 128 + ((((group % 8) ^ (row % 8))) << 4);
      stmatrix_x4(addr, out[b][2 * j], out[b][2 * j + 1], out[b][2 * j + 2], out[b][2 * j + 3]);
    }
  }
}

// One stage's worth of math: for each of the 4 k-steps of 16 in the 64-wide stage, one wgmma per 64-row block of the
// x tile, all against the same stacked weight tile. a_tile and b_tile are the stage's shared addresses.
template <int kMBlocks, int kN>
__device__ __forceinline__ void mma_stage(float (&acc)[kMBlocks][kN / 2], uint32_t a_tile, uint32_t b_tile,
                                          bool accumulate) {
#pragma unroll
  for (int kk = 0; kk < kBK / 16; ++kk) {
    const uint64_t desc_b = sw128_kmajor_desc(b_tile + kk * 32);  // +16 bf16 along k
#pragma unroll
    for (int b = 0; b < kMBlocks; ++b) {
      const uint64_t desc_a = sw128_kmajor_desc(a_tile + b * 64 * kRowBytes + kk * 32);
      const int acc_flag = (accumulate || kk > 0) ? 1 : 0;
      if constexpr (kN == 128)
        wgmma_m64n128k16(acc[b], desc_a, desc_b, acc_flag);
      else
        wgmma_m64n256k16(acc[b], desc_a, desc_b, acc_flag);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Shared memory of one block, as byte offsets from a 1024-byte-aligned base (the swizzle needs that alignment; the
// dynamic shared memory itself is only promised 16 bytes, so we allocate 1 KB more and round the base up).
//   kStages x [ x tile: kBM rows x 64 | weight tile: kBN/2 gate rows, then kBN/2 up rows, x 64 ]
//   kOutTiles x [ output tile: kOutRows rows x kBN/2 columns, as 64-column panels ]
//   mbarriers
template <int kBM, int kBN, int kStages, int kOutTiles, int kOutRows = kBM>
struct SmemLayout {
  static constexpr int kABytes = kBM * kRowBytes;
  static constexpr int kBHalfBytes = (kBN / 2) * kRowBytes;      // one of the two weight boxes
  static constexpr int kStageBytes = kABytes + 2 * kBHalfBytes;  // what TMA delivers per stage (expect_tx)
  static constexpr int kOutBytes = kOutRows * (kBN / 2) * 2;     // one output tile
  static constexpr int kOutOffset = kStages * kStageBytes;
  static constexpr int kBarrierOffset = kOutOffset + kOutTiles * kOutBytes;
  static constexpr int kBarriers = 2 * kStages + 2;  // full[], empty[], and the ping-pong turn barriers
  static constexpr int kBytes = kBarrierOffset + kBarriers * 8 + 1024;
  static_assert(kABytes % 1024 == 0 && kBHalfBytes % 1024 == 0 && kOutBytes % 1024 == 0,
                "every tile must start 1024-byte aligned for the 128-byte swizzle");
  static_assert(kBytes <= 227 * 1024, "more shared memory than an H100 block can have");
};

__device__ __forceinline__ uint8_t* align_1024(uint8_t* p) {
  const uint32_t a = smem_u32(p);
  return p + (((a + 1023) & ~1023u) - a);
}

// ===============================================================================================================
// "teach": one 64 x 128 tile of m per block.
//
// Block = 5 warps: warps 0-3 are the consumer warpgroup (wgmma needs 4 consecutive warps starting at a multiple of
// 4), warp 4 the producer, of which one lane issues all TMA loads. Per stage: 64 rows of x (8 KB) and 128 gate + 128
// up weight rows (32 KB); one wgmma m64n256k16 per k-step of 16 gives every thread 64 g and 64 u values. No setmaxnreg:
// with 160 threads per block every thread can have 255 registers anyway.
constexpr int kTeachBM = 64, kTeachBN = 256, kTeachStages = 4, kTeachThreads = kWarpgroup + 32;
using TeachSmem = SmemLayout<kTeachBM, kTeachBN, kTeachStages, 1>;

__global__ void __launch_bounds__(kTeachThreads, 1)
    gated_gemm_teach_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                            const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                            int k_tiles) {
  constexpr int kStages = kTeachStages;
  using L = TeachSmem;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);  // stage s has landed
  uint64_t* empty = full + kStages;                                        // stage s has been read

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);   // the producer's arrive.expect_tx (plus the bytes)
      mbar_init(&empty[s], 1);  // one consumer thread's arrive
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int m0 = blockIdx.x * kTeachBM;        // first row of x and of m
  const int n0 = blockIdx.y * (kTeachBN / 2);  // first hidden unit (row of W_gate and W_up, column of m)

  if (threadIdx.x >= kWarpgroup) {
    // Producer: fill stage kt % kStages with k-tile kt, once the consumer has released what it held before.
    if (threadIdx.x == kWarpgroup) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);  // release of k-tile kt - kStages
        uint8_t* a = smem + s * L::kStageBytes;
        uint8_t* b = a + L::kABytes;
        mbar_arrive_expect_tx(&full[s], L::kStageBytes);
        tma_load_2d(a, &map_x, &full[s], kt * kBK, m0);                    // x[m0 : m0+64, k]
        tma_load_2d(b, &map_gate, &full[s], kt * kBK, n0);                 // W_gate[n0 : n0+128, k]
        tma_load_2d(b + L::kBHalfBytes, &map_up, &full[s], kt * kBK, n0);  // W_up[n0 : n0+128, k], stacked below
      }
    }
    return;
  }

  // Consumer: the main loop.
  float acc[1][kTeachBN / 2];
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);
    const uint32_t a = smem_u32(smem + s * L::kStageBytes);
    wgmma_fence();
    mma_stage<1, kTeachBN>(acc, a, a + L::kABytes, kt > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();  // simplest form: finish this stage's math before releasing it (the others keep two)
    pin_accumulators(acc);
    if (threadIdx.x == 0) mbar_arrive(&empty[s]);
  }

  // Epilogue: pair g with u in registers, stage through shared memory, one TMA store per 64-column panel.
  uint32_t out[1][kTeachBN / 8];
  gate_times_up<1, kTeachBN>(acc, out);
  uint8_t* tile = smem + L::kOutOffset;
  stage_outputs<1, kTeachBN>(out, smem_u32(tile), threadIdx.x);
  fence_view_async_shared();
  named_barrier_sync(1, kWarpgroup);
  if (threadIdx.x == 0) {
    for (int p = 0; p < kTeachBN / 2 / kStoreCols; ++p)
      tma_store_2d(&map_m, tile + p * kTeachBM * 128, n0 + p * kStoreCols, m0);
    bulk_commit_group();
    bulk_wait_group<0>();  // shared memory must outlive the store's reads
  }
}

// ===============================================================================================================
// The persistent kernels: "pingpong" and "coop" (and, below, "overlap" and "fast").
//
// Grid = one block per SM (at most), each looping over tiles in the order tile = blockIdx.x + i * gridDim.x. Block = 3
// warpgroups. Warpgroup 0 is the producer: it gives registers back (setmaxnreg.dec) and one thread issues every TMA
// load. Warpgroups 1 and 2 are consumers (setmaxnreg.inc: 128 accumulator floats each).
//
// One ring of kStages stages serves both consumers. The producer fills it in tile order, k-tile after k-tile, so the
// k-tiles of the block's i-th tile sit at ring positions i * k_tiles ... i * k_tiles + k_tiles - 1 (stage = position %
// kStages, phase = position / kStages). Each consumer computes its positions from i; no state is passed around.
//
// kCoop = false ("pingpong"): tiles of kBM rows (two m64n128 wgmma per k-step, 64 gate + 64 up columns), and the
// block's tiles alternate between the consumers (consumer 0 takes even i, consumer 1 odd i). Turns: consumer c starts
// the main loop of tile i only after the other consumer has issued all the wgmma of tile i - 1 (barrier turn[1 - c]).
// Two reasons: (1) the tensor cores then work on one tile at a time while the other consumer runs its epilogue on the
// other units; that overlap is the point of the design; (2) ring positions are then waited for in order, so no waiter
// can be two phases behind a barrier (parity waits cannot tell phase p from p + 2).
//
// kCoop = true ("coop"): both consumers work on every tile, each on its 64 of the kBM = 128 rows with one m64n256
// wgmma per k-step against the same 256-row stacked weight tile. Each stage is read by both, so a stage is released
// after two arrivals. Per byte brought into shared memory this does twice the math of a 64-row tile.
//
// Each consumer stages its outputs in its own buffer, so the epilogues never wait for each other.
constexpr int kPersistentThreads = 3 * kWarpgroup;      // producer warpgroup + two consumer warpgroups
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 = 64512 <= 65536 registers per SM
static_assert(kWarpgroup * kProducerRegs + 2 * kWarpgroup * kConsumerRegs <= 65536, "register file");

// Tile t -> (row block, column block), grouped: walk kGroupM row blocks down one column block, then the next column
// block, and only then the next kGroupM row blocks. Tiles running at the same time then share few weight tiles and
// few x tiles, so the L2 cache holds both (it matters once x and the weights outgrow L2, e.g. dim = 4096).
__device__ __forceinline__ void tile_coords(int t, int m_tiles, int n_tiles, int group_m, int& mb, int& nb) {
  const int per_group = group_m * n_tiles;
  const int first_m = (t / per_group) * group_m;
  const int rows = min(group_m, m_tiles - first_m);
  const int r = t % per_group;
  mb = first_m + r % rows;
  nb = r / rows;
}

// The producer of the persistent kernels (one thread): walk this block's tiles in order and, for each, its k-tiles,
// filling the ring. Ring position `pos` uses stage pos % kStages; before refilling a stage it waits until the
// consumers have released what it held kStages positions earlier.
template <class L, int kBM, int kBN, int kStages, int kGroupM>
__device__ __forceinline__ void produce_tiles(uint8_t* smem, uint64_t* full, uint64_t* empty, const CUtensorMap* map_x,
                                              const CUtensorMap* map_gate, const CUtensorMap* map_up,
                                              const CUtensorMap* map_m, int m_tiles, int n_tiles, int k_tiles) {
  prefetch_tensor_map(map_x);
  prefetch_tensor_map(map_gate);
  prefetch_tensor_map(map_up);
  prefetch_tensor_map(map_m);
  const int num_tiles = m_tiles * n_tiles;
  uint32_t pos = 0;
  for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);
    for (int kt = 0; kt < k_tiles; ++kt, ++pos) {
      const uint32_t s = pos % kStages;
      if (pos >= kStages) mbar_wait(&empty[s], ((pos / kStages) - 1) & 1);
      uint8_t* a = smem + s * L::kStageBytes;
      uint8_t* b = a + L::kABytes;
      mbar_arrive_expect_tx(&full[s], L::kStageBytes);
      tma_load_2d(a, map_x, &full[s], kt * kBK, mb * kBM);
      tma_load_2d(b, map_gate, &full[s], kt * kBK, nb * (kBN / 2));
      tma_load_2d(b + L::kBHalfBytes, map_up, &full[s], kt * kBK, nb * (kBN / 2));
    }
  }
}

template <int kBM, int kBN, int kStages, int kGroupM, bool kCoop>
__global__ void __launch_bounds__(kPersistentThreads, 1)
    gated_gemm_persistent_kernel(const __grid_constant__ CUtensorMap map_x,
                                 const __grid_constant__ CUtensorMap map_gate,
                                 const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                                 int m_tiles, int n_tiles, int k_tiles) {
  constexpr int kRows = kCoop ? kBM / 2 : kBM;  // rows of x (and m) one consumer computes per tile
  using L = SmemLayout<kBM, kBN, kStages, 2, kRows>;
  constexpr int kMBlocks = kRows / 64;  // wgmma per k-step: one per 64-row block
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;
  uint64_t* turn = empty + kStages;  // turn[c] completes a phase each time consumer c has issued a tile's wgmma

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kCoop ? 2 : 1);  // cooperative: both consumers read every stage
    }
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / kWarpgroup;
  const int thread = threadIdx.x % kWarpgroup;
  const int num_tiles = m_tiles * n_tiles;

  if (warpgroup == 0) {
    // ---- Producer.
    warpgroup_release_registers<kProducerRegs>();
    if (thread == 0)
      produce_tiles<L, kBM, kBN, kStages, kGroupM>(smem, full, empty, &map_x, &map_gate, &map_up, &map_m, m_tiles,
                                                   n_tiles, k_tiles);
    return;
  }

  // ---- Consumers.
  warpgroup_claim_registers<kConsumerRegs>();
  const int c = warpgroup - 1;
  uint8_t* tile = smem + L::kOutOffset + c * L::kOutBytes;      // this consumer's output staging tile
  const uint32_t a_offset = kCoop ? c * kRows * kRowBytes : 0;  // cooperative: our half of the x tile
  float acc[kMBlocks][kBN / 2];

  for (int i = kCoop ? 0 : c;; i += kCoop ? 1 : 2) {
    const int t = blockIdx.x + i * gridDim.x;
    if (t >= num_tiles) break;
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);

    // Ping-pong: our turn on the tensor cores once the other consumer has issued all of tile i - 1 (its
    // ((i - 1) / 2)-th tile).
    if (!kCoop && i > 0) mbar_wait(&turn[1 - c], ((i - 1) / 2) & 1);

    // Main loop. Two stages' wgmma in flight: after issuing k-tile kt, wait for k-tile kt - 1 and release its stage.
    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const uint32_t pos = first + kt;
      const uint32_t s = pos % kStages;
      mbar_wait(&full[s], (pos / kStages) & 1);
      const uint32_t a = smem_u32(smem + s * L::kStageBytes);
      wgmma_fence();
      mma_stage<kMBlocks, kBN>(acc, a + a_offset, a + L::kABytes, kt > 0);
      wgmma_commit_group();
      if (kt > 0) {
        wgmma_wait_group<1>();
        if (thread == 0) mbar_arrive(&empty[(pos - 1) % kStages]);
      }
    }
    if (!kCoop && thread == 0) mbar_arrive(&turn[c]);  // all our wgmma issued: the other consumer may start its tile
    wgmma_wait_group<0>();
    pin_accumulators(acc);
    if (thread == 0) mbar_arrive(&empty[(first + k_tiles - 1) % kStages]);

    // Epilogue (ping-pong: while the other consumer's tile runs on the tensor cores).
    uint32_t out[kMBlocks][kBN / 8];
    gate_times_up<kMBlocks, kBN>(acc, out);
    if (thread == 0) bulk_wait_group_read<0>();  // our previous tile's store has finished reading the staging tile
    named_barrier_sync(1 + c, kWarpgroup);
    stage_outputs<kMBlocks, kBN>(out, smem_u32(tile), thread);
    fence_view_async_shared();
    named_barrier_sync(1 + c, kWarpgroup);
    if (thread == 0) {
      for (int p = 0; p < kBN / 2 / kStoreCols; ++p)
        tma_store_2d(&map_m, tile + p * kRows * 128, nb * (kBN / 2) + p * kStoreCols,
                     mb * kBM + (kCoop ? c * kRows : 0));
      bulk_commit_group();
    }
  }
  if (thread == 0) bulk_wait_group<0>();
}

// ===============================================================================================================
// "overlap" and "fast": cooperative tiles as in "coop", and each consumer runs the epilogue of its previous tile
// INSIDE the main loop of its next one. At the end of a tile's main loop the consumer only rounds its 128
// accumulators to 64 packed bf16 pairs (g and u, as eager stores them: 64 instructions); the accumulators are then
// free for the next tile, and the GELU, multiply and stmatrix of the held pairs run in kChunks chunks, one after
// issuing the wgmma of each of the next tile's first kChunks k-tiles, while the tensor cores work through them. Same
// warp, program order: the wgmma are always issued before the chunk, so the tensor cores always have work queued.
// A block's last tile has nothing to hide behind; its epilogue runs after the loop. "fast" is this kernel with
// kFastMath (see gelu_times_up_bf16x2).
constexpr int kOverlapBM = 128, kOverlapBN = 256;
// The consumers hold 128 accumulators and 64 packed pairs: give them 240 registers, the producer the minimum, 24.
constexpr int kOverlapProducerRegs = 24, kOverlapConsumerRegs = 240;
static_assert(kWarpgroup * kOverlapProducerRegs + 2 * kWarpgroup * kOverlapConsumerRegs <= 65536, "register file");

// One chunk of the held tile's epilogue: pairs [kCh * kPairs, (kCh + 1) * kPairs) of this thread's 32 packed output
// pairs (kPairs = 32 / kChunks; output column groups kCh * kPairs / 2 ...), computed in place over the g pairs, then
// their stmatrix.x4 (one per 4 pairs) into the staging tile.
template <int kCh, int kChunks, bool kFastMath>
__device__ __forceinline__ void overlap_chunk(uint32_t (&held_g)[32], const uint32_t (&held_u)[32], uint32_t tile,
                                              int thread) {
  constexpr int kPairs = 32 / kChunks;
  static_assert(kPairs % 4 == 0, "a chunk must fill whole stmatrix.x4");
  constexpr int kPanelBytes = 64 * 128;
  const int warp = thread / 32, lane = thread % 32;
  const int matrix = lane / 8, row_in_matrix = lane % 8;
#pragma unroll
  for (int k = kCh * kPairs; k < (kCh + 1) * kPairs; ++k)
    held_g[k] = gelu_times_up_bf16x2<kFastMath>(held_g[k], held_u[k]);
#pragma unroll
  for (int j = kCh * kPairs / 2; j < (kCh + 1) * kPairs / 2; j += 2) {
    const int row = 16 * warp + 8 * (matrix & 1) + row_in_matrix;
    const int group = j + (matrix >> 1);
    const uint32_t addr = tile + (group / 8) * kPanelBytes + row * 128 + ((((group % 8) ^ (row % 8))) << 4);
    stmatrix_x4(addr, held_g[2 * j], held_g[2 * j + 1], held_g[2 * j + 2], held_g[2 * j + 3]);
  }
}

// Run chunk `ch`, a run-time value, through compile-time instances (a chain of ifs), so the register arrays are
// indexed with constants only (a run-time index would move them to local memory).
template <int kK, int kChunks, bool kFastMath>
__device__ __forceinline__ void overlap_chunk_at(int ch, uint32_t (&held_g)[32], const uint32_t (&held_u)[32],
                                                 uint32_t tile, int thread) {
  if constexpr (kK < kChunks) {
    if (ch == kK)
      overlap_chunk<kK, kChunks, kFastMath>(held_g, held_u, tile, thread);
    else
      overlap_chunk_at<kK + 1, kChunks, kFastMath>(ch, held_g, held_u, tile, thread);
  }
}

// After the last chunk: make the stmatrix writes visible to the copy engine, and one thread stores the tile.
__device__ __forceinline__ void overlap_store(const CUtensorMap* map_m, uint8_t* tile, int c, int thread, int row0,
                                              int col0) {
  fence_view_async_shared();
  named_barrier_sync(1 + c, kWarpgroup);
  if (thread == 0) {
    for (int p = 0; p < kOverlapBN / 2 / kStoreCols; ++p)
      tma_store_2d(map_m, tile + p * 64 * 128, col0 + p * kStoreCols, row0);
    bulk_commit_group();
  }
}

template <int kStages, int kGroupM, int kChunks, bool kFastMath>
__global__ void __launch_bounds__(kPersistentThreads, 1)
    gated_gemm_overlap_kernel(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_gate,
                              const __grid_constant__ CUtensorMap map_up, const __grid_constant__ CUtensorMap map_m,
                              int m_tiles, int n_tiles, int k_tiles) {
  constexpr int kBM = kOverlapBM, kBN = kOverlapBN;
  using L = SmemLayout<kBM, kBN, kStages, 2, 64>;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* smem = align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* empty = full + kStages;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2);  // both consumers read every stage
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / kWarpgroup;
  const int thread = threadIdx.x % kWarpgroup;
  const int num_tiles = m_tiles * n_tiles;

  if (warpgroup == 0) {
    warpgroup_release_registers<kOverlapProducerRegs>();
    if (thread == 0)
      produce_tiles<L, kBM, kBN, kStages, kGroupM>(smem, full, empty, &map_x, &map_gate, &map_up, &map_m, m_tiles,
                                                   n_tiles, k_tiles);
    return;
  }

  warpgroup_claim_registers<kOverlapConsumerRegs>();
  const int c = warpgroup - 1;
  uint8_t* tile = smem + L::kOutOffset + c * L::kOutBytes;
  const uint32_t tile_u32 = smem_u32(tile);
  const uint32_t a_offset = c * 64 * kRowBytes;  // our 64 rows of the 128-row x tile
  float acc[1][kBN / 2];
  uint32_t held_g[32], held_u[32];  // the previous tile's g and u, rounded to bf16, in pairs
  bool holding = false;
  int held_row = 0, held_col = 0;  // where the held tile goes in m

  for (int i = 0;; ++i) {
    const int t = blockIdx.x + i * gridDim.x;
    if (t >= num_tiles) break;
    int mb, nb;
    tile_coords(t, m_tiles, n_tiles, kGroupM, mb, nb);

    const uint32_t first = static_cast<uint32_t>(i) * k_tiles;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const uint32_t pos = first + kt;
      const uint32_t s = pos % kStages;
      mbar_wait(&full[s], (pos / kStages) & 1);
      const uint32_t a = smem_u32(smem + s * L::kStageBytes);
      wgmma_fence();
      mma_stage<1, kBN>(acc, a + a_offset, a + L::kABytes, kt > 0);
      wgmma_commit_group();
      if (holding && kt < kChunks) {  // while the tensor cores run: a chunk of the previous tile's epilogue
        overlap_chunk_at<0, kChunks, kFastMath>(kt, held_g, held_u, tile_u32, thread);
        if (kt == kChunks - 1) overlap_store(&map_m, tile, c, thread, held_row, held_col);
      }
      if (kt > 0) {
        wgmma_wait_group<1>();
        if (thread == 0) mbar_arrive(&empty[(pos - 1) % kStages]);
      }
    }
    if (holding && k_tiles < kChunks) {  // short main loops (dim <= 192): the chunks that did not fit
      for (int ch = k_tiles; ch < kChunks; ++ch)
        overlap_chunk_at<0, kChunks, kFastMath>(ch, held_g, held_u, tile_u32, thread);
      overlap_store(&map_m, tile, c, thread, held_row, held_col);
    }
    wgmma_wait_group<0>();
    pin_accumulators(acc);
    if (thread == 0) mbar_arrive(&empty[(first + k_tiles - 1) % kStages]);

      // Hold this tile: round g and u to bf16 pairs (as eager's GEMMs store them). The accumulators are free again.
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      held_g[k] = pack_bf16x2(acc[0][2 * k], acc[0][2 * k + 1]);
      held_u[k] = pack_bf16x2(acc[0][kBN / 4 + 2 * k], acc[0][kBN / 4 + 2 * k + 1]);
    }
    holding = true;
    held_row = mb * kBM + c * 64;
    held_col = nb * (kBN / 2);
    // The staging tile must be free before the next tile's chunks write it: the store issued one tile ago has long
    // finished reading it, so this wait costs nothing in steady state.
    if (thread == 0) bulk_wait_group_read<0>();
    named_barrier_sync(1 + c, kWarpgroup);
  }
  if (holding) {  // the block's last tile: nothing left to overlap with
    for (int ch = 0; ch < kChunks; ++ch) overlap_chunk_at<0, kChunks, kFastMath>(ch, held_g, held_u, tile_u32, thread);
    overlap_store(&map_m, tile, c, thread, held_row, held_col);
  }
  if (thread == 0) bulk_wait_group<0>();
}

// ===============================================================================================================
// Host side: argument rules, tensor maps, launchers, the variant list.

std::string shape_str(int64_t M, int64_t dim, int64_t hidden) {
  return "M = " + std::to_string(M) + ", dim = " + std::to_string(dim) + ", hidden = " + std::to_string(hidden);
}

// Every failure below is a ladder::Error: the chapter prints its one line and exits 1 (a shape the reader chose is
// caught earlier, in main, as a usage error with the same words).
[[noreturn]] void fail(const std::string& what) { throw ladder::Error("gated_gemm: " + what); }

// The compute capability of the current device, asked once per launch (cheap: the runtime caches it).
void require_hopper() {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (const std::string why = hopper_only(major, minor); !why.empty()) fail(why);
}

// The rules every launcher enforces. Returns false when there is nothing for a kernel to do (an empty output, or
// dim == 0, where m = gelu(0) * 0 = 0 everywhere and a memset writes it).
bool check_arguments(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim,
                     int64_t hidden, cudaStream_t stream) {
  if (M < 0 || dim < 0 || hidden < 0) fail("sizes must be >= 0 (" + shape_str(M, dim, hidden) + ")");
  if (const std::string rule = tma_shape_rule(dim, hidden); !rule.empty()) fail(rule);
  if (M > INT_MAX || dim > INT_MAX || hidden > INT_MAX)
    fail("sizes must be < 2^31 (TMA tile coordinates are 32-bit; " + shape_str(M, dim, hidden) + ")");
  if (M == 0 || hidden == 0) return false;
  require_hopper();
  const struct {
    const void* p;
    const char* name;
  } ptrs[] = {{x, "x"}, {w_gate, "w_gate"}, {w_up, "w_up"}, {m, "m"}};
  for (const auto& q : ptrs)
    if (reinterpret_cast<uintptr_t>(q.p) % 16 != 0)
      fail(std::string(q.name) + " is not 16-byte aligned: TMA needs 16-byte aligned global addresses");
  if (dim == 0) {
    CUDA_CHECK(cudaMemsetAsync(m, 0, static_cast<size_t>(M) * hidden * sizeof(bf16), stream));
    return false;
  }
  return true;
}

// cuTensorMapEncodeTiled, fetched once from the driver through the runtime (no libcuda link needed).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
      fail("the CUDA driver has no cuTensorMapEncodeTiled (needs a CUDA 12+ driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A tensor map for a row-major bf16 matrix [rows, cols], read or written in boxes of box_rows x box_cols
// (box_cols = 64: 128 bytes, the width of the 128-byte swizzle). Out-of-range box elements load as zeros and are
// not stored.
CUtensorMap tile_map(const void* base, int64_t rows, int64_t cols, int box_rows, int box_cols, const char* name) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};  // innermost first
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(bf16)};               // bytes, row to row
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r =
      tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
                           element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail(std::string("cuTensorMapEncodeTiled failed for ") + name + " (CUresult " +
         std::to_string(static_cast<int>(r)) + ")");
  return map;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Lets `kernel` use `bytes` of dynamic shared memory (past the default 48 KB), once per process: the first launch
// happens outside any CUDA graph capture, so a captured forward makes no call but the launch itself.
template <auto kernel>
void allow_smem(int bytes) {
  static const bool done = [&] {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)done;
}

void launch_teach(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim, int64_t hidden,
                  cudaStream_t stream) {
  if (!check_arguments(x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  const int64_t m_tiles = ceil_div(M, kTeachBM), n_tiles = ceil_div(hidden, kTeachBN / 2);
  if (n_tiles > 65535) fail("teach: hidden too large for grid.y");
  const CUtensorMap map_x = tile_map(x, M, dim, kTeachBM, kBK, "x");
  const CUtensorMap map_gate = tile_map(w_gate, hidden, dim, kTeachBN / 2, kBK, "w_gate");
  const CUtensorMap map_up = tile_map(w_up, hidden, dim, kTeachBN / 2, kBK, "w_up");
  const CUtensorMap map_m = tile_map(m, M, hidden, kTeachBM, kStoreCols, "m");
  allow_smem<gated_gemm_teach_kernel>(TeachSmem::kBytes);
  const dim3 grid(static_cast<unsigned>(m_tiles), static_cast<unsigned>(n_tiles));
  gated_gemm_teach_kernel<<<grid, kTeachThreads, TeachSmem::kBytes, stream>>>(map_x, map_gate, map_up, map_m,
                                                                              static_cast<int>(ceil_div(dim, kBK)));
  CUDA_CHECK_LAUNCH();
}

template <int kBM, int kBN, int kStages, int kGroupM, bool kCoop>
void launch_persistent(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim,
                       int64_t hidden, cudaStream_t stream) {
  if (!check_arguments(x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  constexpr int kRows = kCoop ? kBM / 2 : kBM;
  using L = SmemLayout<kBM, kBN, kStages, 2, kRows>;
  auto kernel = gated_gemm_persistent_kernel<kBM, kBN, kStages, kGroupM, kCoop>;
  const int64_t m_tiles = ceil_div(M, kBM), n_tiles = ceil_div(hidden, kBN / 2), k_tiles = ceil_div(dim, kBK);
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t num_tiles = m_tiles * n_tiles;
  const int64_t grid = num_tiles < sms ? num_tiles : sms;  // persistent: at most one block per SM
  // Ring positions (tiles per block x k-tiles) and tile indices are 32-bit in the kernel.
  if (num_tiles + grid > INT_MAX || ceil_div(num_tiles, grid) * k_tiles > INT_MAX)
    fail("too many tiles for 32-bit tile indices (" + shape_str(M, dim, hidden) + ")");
  const CUtensorMap map_x = tile_map(x, M, dim, kBM, kBK, "x");
  const CUtensorMap map_gate = tile_map(w_gate, hidden, dim, kBN / 2, kBK, "w_gate");
  const CUtensorMap map_up = tile_map(w_up, hidden, dim, kBN / 2, kBK, "w_up");
  const CUtensorMap map_m = tile_map(m, M, hidden, kRows, kStoreCols, "m");
  allow_smem<gated_gemm_persistent_kernel<kBM, kBN, kStages, kGroupM, kCoop>>(L::kBytes);
  kernel<<<static_cast<unsigned>(grid), kPersistentThreads, L::kBytes, stream>>>(
      map_x, map_gate, map_up, map_m, static_cast<int>(m_tiles), static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

template <int kStages, int kGroupM, int kChunks, bool kFastMath>
void launch_overlap(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim,
                    int64_t hidden, cudaStream_t stream) {
  if (!check_arguments(x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  constexpr int kBM = kOverlapBM, kBN = kOverlapBN;
  using L = SmemLayout<kBM, kBN, kStages, 2, 64>;
  auto kernel = gated_gemm_overlap_kernel<kStages, kGroupM, kChunks, kFastMath>;
  const int64_t m_tiles = ceil_div(M, kBM), n_tiles = ceil_div(hidden, kBN / 2), k_tiles = ceil_div(dim, kBK);
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t num_tiles = m_tiles * n_tiles;
  const int64_t grid = num_tiles < sms ? num_tiles : sms;
  if (num_tiles + grid > INT_MAX || ceil_div(num_tiles, grid) * k_tiles > INT_MAX)
    fail("too many tiles for 32-bit tile indices (" + shape_str(M, dim, hidden) + ")");
  const CUtensorMap map_x = tile_map(x, M, dim, kBM, kBK, "x");
  const CUtensorMap map_gate = tile_map(w_gate, hidden, dim, kBN / 2, kBK, "w_gate");
  const CUtensorMap map_up = tile_map(w_up, hidden, dim, kBN / 2, kBK, "w_up");
  const CUtensorMap map_m = tile_map(m, M, hidden, 64, kStoreCols, "m");
  allow_smem<gated_gemm_overlap_kernel<kStages, kGroupM, kChunks, kFastMath>>(L::kBytes);
  kernel<<<static_cast<unsigned>(grid), kPersistentThreads, L::kBytes, stream>>>(
      map_x, map_gate, map_up, map_m, static_cast<int>(m_tiles), static_cast<int>(n_tiles), static_cast<int>(k_tiles));
  CUDA_CHECK_LAUNCH();
}

}  // namespace

// The variant list, in reading order; dev/NOTES.md has each one's measurements.
const std::vector<GatedGemmVariant>& gated_gemm_variants() {
  static const std::vector<GatedGemmVariant> variants = {
      {"teach",
       "one 64x128 tile per block: one consumer warpgroup (wgmma m64n256 over 128 gate + 128 up rows), 4 stages",
       launch_teach},
      {"pingpong",
       "persistent; two consumer warpgroups alternate main loop and epilogue on 128x64 tiles (2x m64n128), 6 stages",
       launch_persistent<128, 128, 6, 16, false>},
      {"coop", "persistent; both consumers on one 128x128 tile (each m64n256 on 64 rows), 4 stages, grouped order",
       launch_persistent<128, 256, 4, 16, true>},
      {"overlap", "as coop; each consumer runs its previous tile's epilogue in 8 chunks between its next tile's wgmma",
       launch_overlap<4, 16, 8, false>},
      {"fast",
       "as overlap, with flush-to-zero EX2/RCP and a bf16x2 multiply in the epilogue (same bits, fewer instructions)",
       launch_overlap<4, 16, 8, true>},
  };
  return variants;
}

const GatedGemmVariant& find_gated_gemm_variant(const std::string& name) {
  return ladder::find_variant(gated_gemm_variants(), name, "geglu_gemm");
}

std::string tma_shape_rule(int64_t dim, int64_t hidden) {
  for (auto [what, n, rows] : {std::tuple{"dim", dim, "x, w_gate and w_up"}, {"hidden", hidden, "m"}})
    if (n % 8 != 0)
      return std::string(what) + " = " + std::to_string(n) + " is not a multiple of 8: TMA needs every row of " + rows +
             " to start on a 16-byte boundary (8 bf16 values)";
  return "";
}

std::string hopper_only(int major, int minor) {
  if (major == 9 && minor == 0) return "";
  // reference_traces_dir(): "<source tree>/traces/reference/h100/", or a phrase naming that folder.
  const std::string dir = ladder::reference_traces_dir();
  const std::string trace = dir.back() == '/' ? dir + "04_epilogue_mlp.json" : "04_epilogue_mlp.json in " + dir;
  return "this rung needs a Hopper GPU (sm_90: wgmma and TMA; this one is sm_" + std::to_string(major) +
         std::to_string(minor) + "); our H100 trace is " + trace;
}

void geglu_gemm(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                const ladder::Tensor& m, const std::string& variant) {
  ladder::OpRange range("ladder::geglu_gemm", {&x, &w_gate, &w_up});  // ours, not an aten op: one kernel inside
  const GatedGemmVariant& v = find_gated_gemm_variant(variant);
  if (x.dim() < 1 || w_gate.dim() != 2) throw ladder::Error("geglu_gemm: x needs a last dimension, w_gate 2");
  const int64_t dim = x.size(-1), hidden = w_gate.size(0);
  int64_t rows = 1;  // x's leading dimensions, flattened: [batch, seq, dim] is batch * seq rows
  for (int d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm", "x", x, x.numel());
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm", "w_gate", w_gate, hidden * dim);
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm", "w_up", w_up, hidden * dim);
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm", "output", m, rows * hidden);
  if (w_gate.size(1) != dim || w_up.shape != w_gate.shape)
    throw ladder::Error("geglu_gemm: w_gate and w_up must both be [hidden, dim] with x's dim = " + std::to_string(dim));
  v.launch(x.ptr<bf16>(), w_gate.ptr<bf16>(), w_up.ptr<bf16>(), m.ptr<bf16>(), rows, dim, hidden,
           ladder::current_stream());
}

}  // namespace ch04
