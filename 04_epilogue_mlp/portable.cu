// The portable variant: m = gelu(x @ W_gate^T) * (x @ W_up^T) in one GEMM built on the instructions every NVIDIA GPU
// since the A100 has (sm_80, 86, 89, 90, and later ones through the compute_80 PTX): mma.sync on the tensor cores,
// ldmatrix to feed them from shared memory, and cp.async to fill shared memory from global memory in the background.
// The Hopper variants do the same work with wgmma and TMA, which exist only on sm_90.
//
// THE PAIRING. mma.sync.m16n8k16 multiplies a 16 x 16 piece of x (the A fragment, in 4 registers of every lane of a
// warp) by a 16 x 8 piece of weights (the B fragment, 2 registers) into a 16 x 8 float32 accumulator: lane l holds
// rows l/4 and l/4 + 8, columns 2 * (l % 4) and 2 * (l % 4) + 1. A warp here owns 64 rows and 32 hidden units: for
// each k-step of 16 it loads the x fragment once and issues one mma into acc_g with W_gate's fragment and one into
// acc_u with W_up's, for the same 8 hidden units. So acc_g[i][j][e] and acc_u[i][j][e] are g and u of the same (row,
// unit) in the same register of the same lane, and gelu(g) * u is computed where it lies, with no shuffle and no trip
// through memory (the pairing CUTLASS's dual GEMM uses).
//
// THE PIPELINE. A block of 4 warps computes a 128-row x 64-unit tile of m, walking k in steps of 64 (one 128-byte
// row of x or of a weight). Three stages of shared memory rotate: while the warps multiply stage s, cp.async fills the
// next two (cp.async.wait_group and __syncthreads say when a stage has landed and when it may be refilled). Rows and
// k-chunks past the matrix edges are zero-filled by cp.async (a source size of 0), so any M and any dim, hidden that
// are multiples of 8 work, as TMA's zero fill makes them work on Hopper. Each 16-byte chunk is stored at chunk ^ (row
// % 8) within its row: the 8 rows one ldmatrix reads then sit in 8 different bank groups (no bank conflicts).
// The grid is persistent (as many blocks as fit on the GPU at once, each looping over tiles) so that the next tile's
// first loads are already on their way while the current tile's epilogue runs.
//
// THE ARITHMETIC of the epilogue is kernels.cuh's: g and u rounded to bf16, the GELU in float32 rounded to bf16, the
// product in float32 rounded to bf16. The GELU is the fast form of gpu/gelu.cuh (one MUFU.EX2 and one MUFU.RCP, their
// flush-to-zero forms), which gives the exact form's bits after rounding on every bf16 input (a gpu test tries all).
//
// TUNING.md has what was tried and measured (tile shapes, stages, the persistent grid) and what limits it.
#include "04_epilogue_mlp/portable.cuh"

#include "04_epilogue_mlp/launch.h"

#include "cuda/check.h"
#include "gpu/gelu.cuh"

namespace ch04 {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kBM = 128;                // rows of x per tile
constexpr int kBN = 64;                 // hidden units per tile: 64 rows of W_gate and the same 64 rows of W_up
constexpr int kBK = 64;                 // k per stage: 64 bf16 = one 128-byte row
constexpr int kStages = 3;              // 3 x 32 KiB of shared memory: fits the 99 KiB of sm_86/89 too
constexpr int kWarpsM = 2, kWarpsN = 2;  // 4 warps, each 64 rows x 32 units
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
constexpr int kMT = kWM / 16, kNT = kWN / 8;  // a warp's 16 x 8 accumulator tiles: 4 x 4, for gate and for up
constexpr int kKSteps = kBK / 16;             // mma k-steps per stage
constexpr int kRowBytes = kBK * 2;
constexpr int kChunks = kBK / 8;  // 16-byte chunks per row
constexpr int kATile = kBM * kRowBytes, kBTile = kBN * kRowBytes;
constexpr int kStageBytes = kATile + 2 * kBTile;  // x, W_gate, W_up
constexpr int kSmemBytes = kStages * kStageBytes;

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// Byte offset of 16-byte chunk c of row r in a stage's tile: the swizzle described above.
__device__ __forceinline__ uint32_t swizzled(int r, int c) { return r * kRowBytes + ((c ^ (r % 8)) << 4); }

// cp.async: copy 16 bytes global -> shared without passing through registers; with valid == false, write 16 zero
// bytes and read nothing (src is then never dereferenced).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// ldmatrix.x4: four 8 x 8 bf16 matrices from shared memory into the fragment layout mma.sync takes; lanes 8i..8i+7
// give the row addresses of matrix i, and register i of every lane receives its part of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// d += a * b: a 16 x 16 bf16 (row-major), b 16 x 8 bf16 (column-major: weights rows are k-contiguous), d float32.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The cp.async copies of one thread for one tile. Thread t copies chunk t % 8 of tile rows t / 8, t / 8 + 16, ...:
// the same chunk and the same swizzle phase in every row it copies (16 is a multiple of 8), so one shared offset and
// one global pointer per matrix serve them all; only k moves from stage to stage.
struct TileLoader {
  static constexpr int kRowStep = kThreads / kChunks;
  static constexpr int kARows = kBM / kRowStep, kBRows = kBN / kRowStep;
  const bf16 *x, *g, *u;  // this thread's first chunk at k = 0 (row clamped into the matrix if it is past the edge)
  int64_t step;           // kRowStep rows, in elements
  uint32_t offset;        // shared offset of the first chunk
  uint32_t x_in, w_in;    // bit i: row i * kRowStep of the tile is inside x / the weights
  int k;                  // this thread's k within a stage

  __device__ TileLoader(const bf16* x_, const bf16* wg, const bf16* wu, int64_t M, int64_t dim, int64_t hidden,
                        int64_t m0, int64_t n0) {
    const int r = threadIdx.x / kChunks, c = threadIdx.x % kChunks;
    k = 8 * c;
    step = kRowStep * dim;
    x = x_ + (m0 + r < M ? m0 + r : 0) * dim + k;
    g = wg + (n0 + r < hidden ? n0 + r : 0) * dim + k;
    u = wu + (n0 + r < hidden ? n0 + r : 0) * dim + k;
    offset = swizzled(r, c);
    x_in = w_in = 0;
    for (int i = 0; i < kARows; ++i) x_in |= uint32_t(m0 + r + i * kRowStep < M) << i;
    for (int i = 0; i < kBRows; ++i) w_in |= uint32_t(n0 + r + i * kRowStep < hidden) << i;
  }

  // Stage `stage` <- k-columns [k0, k0 + kBK) of the tile's x rows, W_gate rows and W_up rows.
  __device__ __forceinline__ void load(uint32_t stage, int64_t k0, int64_t dim) const {
    const bool k_in = k0 + k < dim;
#pragma unroll
    for (int i = 0; i < kARows; ++i) {
      const bool in = k_in && (x_in >> i & 1);
      cp_async16(stage + offset + i * kRowStep * kRowBytes, in ? x + i * step + k0 : x, in);
    }
#pragma unroll
    for (int i = 0; i < kBRows; ++i) {
      const bool in = k_in && (w_in >> i & 1);
      const uint32_t dst = stage + kATile + offset + i * kRowStep * kRowBytes;
      cp_async16(dst, in ? g + i * step + k0 : g, in);
      cp_async16(dst + kBTile, in ? u + i * step + k0 : u, in);
    }
  }
};

// Two outputs from two g and two u of adjacent columns: the rounding of kernels.cuh, packed as a bf16 pair.
__device__ __forceinline__ uint32_t gelu_times_up(float g0, float g1, float u0, float u1) {
  const __nv_bfloat162 g = __floats2bfloat162_rn(g0, g1), u = __floats2bfloat162_rn(u0, u1);
  const __nv_bfloat162 h = __floats2bfloat162_rn(ladder::gelu_tanh_f32_ftz(__low2float(g)),
                                                 ladder::gelu_tanh_f32_ftz(__high2float(g)));
  const __nv_bfloat162 out = __floats2bfloat162_rn(__fmul_rn(__low2float(h), __low2float(u)),
                                                   __fmul_rn(__high2float(h), __high2float(u)));
  return *reinterpret_cast<const uint32_t*>(&out);
}

__global__ void __launch_bounds__(kThreads, 2)
    geglu_gemm_portable(const bf16* __restrict__ x, const bf16* __restrict__ wg, const bf16* __restrict__ wu,
                        bf16* __restrict__ m, int64_t M, int64_t dim, int64_t hidden) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t stages = smem_u32(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int k_tiles = int((dim + kBK - 1) / kBK);
  const int64_t n_tiles = (hidden + kBN - 1) / kBN, tiles = (M + kBM - 1) / kBM * n_tiles;
  auto stage = [&](int kt) { return stages + (kt % kStages) * kStageBytes; };

  // A tile's first kStages - 1 stages, queued; returns the tile's loader for the rest.
  auto start_tile = [&](int64_t t) {
    const TileLoader l(x, wg, wu, M, dim, hidden, t / n_tiles * kBM, t % n_tiles * kBN);
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) l.load(stage(s), int64_t(s) * kBK, dim);
      cp_async_commit();  // always commit, so that "all but the newest kStages - 2 groups" counts stages
    }
    return l;
  };

  // This lane's ldmatrix addresses within a stage at k-step 0. x: lanes 0-15 give rows 0-15 at k 0-7, lanes 16-31 the
  // same rows at k 8-15 (the four 8 x 8 pieces of an A fragment). Weights: lanes give rows 0-7, 0-7, 8-15, 8-15 at k
  // 0-7, 8-15, 0-7, 8-15 (the B fragments of two 8-unit groups). At k-step s the chunk is chunk + 2s = chunk ^ 2s
  // (the lane's chunk is 0 or 1), and the swizzle is an XOR too, so the address is the step-0 one XOR (2s << 4).
  const uint32_t a_addr = swizzled(wm * kWM + lane % 16, lane / 16);
  const uint32_t b_addr = kATile + swizzled(wn * kWN + lane % 8 + 8 * (lane / 16), lane / 8 % 2);
  uint32_t a[2][kMT][4], bg[2][kNT][2], bu[2][kNT][2];  // fragments of two k-steps: one in use, one loading
  auto load_fragments = [&](int buf, uint32_t st, int s) {
    const uint32_t ao = st + (a_addr ^ (s << 5)), bo = st + (b_addr ^ (s << 5));
    for (int i = 0; i < kMT; ++i) ldmatrix_x4(ao + i * 16 * kRowBytes, a[buf][i][0], a[buf][i][1], a[buf][i][2], a[buf][i][3]);
    for (int j = 0; j < kNT; j += 2) {
      const uint32_t row = bo + j * 8 * kRowBytes;
      ldmatrix_x4(row, bg[buf][j][0], bg[buf][j][1], bg[buf][j + 1][0], bg[buf][j + 1][1]);
      ldmatrix_x4(row + kBTile, bu[buf][j][0], bu[buf][j][1], bu[buf][j + 1][0], bu[buf][j + 1][1]);
    }
  };

  int64_t tile = blockIdx.x;
  if (tile >= tiles) return;
  TileLoader loader = start_tile(tile);
  for (; tile < tiles; tile += gridDim.x) {
    float acc_g[kMT][kNT][4] = {}, acc_u[kMT][kNT][4] = {};
    if (k_tiles > 0) {
      cp_async_wait<kStages - 2>();
      __syncthreads();
      load_fragments(0, stage(0), 0);
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
      for (int s = 0; s < kKSteps; ++s) {
        if (s == kKSteps - 1) {  // the next stage must have landed before its first fragments are read
          cp_async_wait<kStages - 2>();
          __syncthreads();
        }
        // Fragments of the next k-step load while this one's mma run.
        if (s + 1 < kKSteps) load_fragments((s + 1) % 2, stage(kt), s + 1);
        else if (kt + 1 < k_tiles) load_fragments((s + 1) % 2, stage(kt + 1), 0);
        if (s == 0) {  // refill the stage every warp finished reading before the last __syncthreads
          if (kt + kStages - 1 < k_tiles) loader.load(stage(kt + kStages - 1), int64_t(kt + kStages - 1) * kBK, dim);
          cp_async_commit();
        }
#pragma unroll
        for (int i = 0; i < kMT; ++i)
#pragma unroll
          for (int j = 0; j < kNT; ++j) {
            mma_bf16(acc_g[i][j], a[s % 2][i], bg[s % 2][j][0], bg[s % 2][j][1]);
            mma_bf16(acc_u[i][j], a[s % 2][i], bu[s % 2][j][0], bu[s % 2][j][1]);
          }
      }
    }
    // Every warp is done with the stages: the next tile's loads start now and run during the epilogue.
    __syncthreads();
    if (tile + gridDim.x < tiles) loader = start_tile(tile + gridDim.x);

    // The epilogue, register to register; each lane stores its pairs of adjacent outputs straight to m.
    const int64_t m0 = tile / n_tiles * kBM + wm * kWM + lane / 4, n0 = tile % n_tiles * kBN + wn * kWN + 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t row = m0 + 16 * i + 8 * h, col = n0 + 8 * j;
          if (row < M && col < hidden)  // hidden is even, so col + 1 is inside too
            *reinterpret_cast<uint32_t*>(m + row * hidden + col) =
                gelu_times_up(acc_g[i][j][2 * h], acc_g[i][j][2 * h + 1], acc_u[i][j][2 * h], acc_u[i][j][2 * h + 1]);
        }
  }
  cp_async_wait<0>();
}

}  // namespace

void launch_portable(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim,
                     int64_t hidden, cudaStream_t stream) {
  if (M == 0 || hidden == 0) return;
  // As many blocks as fit on the GPU at once: the SM count asked once per device (launch.h), the blocks per SM once per
  // process (a grid size only: any count is correct).
  allow_smem<geglu_gemm_portable>(kSmemBytes);
  static const int per_sm = [] {
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, geglu_gemm_portable, kThreads, kSmemBytes));
    return n > 0 ? n : 1;
  }();
  const int64_t slots = int64_t(current_device().sms) * per_sm;
  const int64_t tiles = (M + kBM - 1) / kBM * ((hidden + kBN - 1) / kBN);
  const unsigned grid = unsigned(tiles < slots ? tiles : slots);
  geglu_gemm_portable<<<grid, kThreads, kSmemBytes, stream>>>(x, w_gate, w_up, m, M, dim, hidden);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch04
