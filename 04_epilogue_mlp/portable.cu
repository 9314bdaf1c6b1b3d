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
// next two (cp.async.wait_group and __syncthreads say when a stage has landed and when it may be refilled), a quarter
// of a stage's copies per k-step, between the mma. k-chunks past dim are zero-filled by cp.async (a source size of
// 0); rows past M or hidden re-read the last row (they feed only outputs that are not stored), so any M and any dim,
// hidden that are multiples of 8 work, as TMA's zero fill makes them work on Hopper. Each 16-byte chunk is stored at
// chunk ^ (row % 8) within its row: the 8 rows one ldmatrix reads then sit in 8 different bank groups (no bank
// conflicts). The grid is persistent (as many blocks as fit on the GPU at once, each looping over tiles) so that the
// next tile's first loads are already on their way while the current tile's epilogue runs.
// No branch sits between the mma of a k-tile: the copies and the stores are predicated instructions, so the compiler
// can interleave them with the mma, and the per-copy arithmetic is one 64-bit add per row and stage.
//
// THE ARITHMETIC of the epilogue is kernels.cuh's: g and u rounded to bf16, the GELU in float32 rounded to bf16, the
// product in float32 rounded to bf16. The GELU is the fast form of gpu/gelu.cuh (one MUFU.EX2 and one MUFU.RCP, their
// flush-to-zero forms), which gives the exact form's bits after rounding on every bf16 input (a gpu test tries all).
//
// TUNING.md has what was tried and measured (tile shapes, stages, the persistent grid, the instruction stream between
// the mma) and what limits it.
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

// cp.async: copy 16 bytes global -> shared without passing through registers, if `issue`; src_bytes 16, or 0 to write
// 16 zero bytes and read nothing. The predicate is part of the instruction, so a copy that may not be issued needs no
// branch, and the copies stay in the same stretch of code as the mma they are interleaved with.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, uint32_t src_bytes, bool issue) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n @p cp.async.cg.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(dst),
      "l"(src), "r"(src_bytes), "r"(int(issue))
      : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// A 4-byte store to global memory at p + kOffset bytes, if `store`: predicated, not branched around, and with the
// offset in the instruction, so that the stores of one row share one address register.
template <int kOffset>
__device__ __forceinline__ void st_global_if(const void* p, uint32_t v, bool store) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p st.global.b32 [%0+%3], %1;\n}\n" ::"l"(p), "r"(v),
               "r"(int(store)), "n"(kOffset)
               : "memory");
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
// the same chunk and the same swizzle phase in every row it copies (16 is a multiple of 8), so one shared offset
// serves them all. It keeps one global pointer per row it copies, and moves each on by one stage (128 bytes) just
// before that row's next copy: a pointer is written a whole stage after the cp.async that read it, by when the copy
// unit has long taken it (overwriting the address registers of a cp.async still queued stalls the warp).
// Rows past the matrix's edge re-read its last row: a row of x only feeds the same row of m, a row of a weight only
// the same column, and the epilogue stores neither, so they need valid addresses, not zeros. Only k past dim must
// read as zeros (it feeds every output): a chunk past dim is zero-filled (a source size of 0), its pointer left on
// the row's last chunk inside dim, a valid address that is then not read.
struct TileLoader {
  static constexpr int kRowStep = kThreads / kChunks;
  static constexpr int kARows = kBM / kRowStep, kBRows = kBN / kRowStep;
  const char* p[kARows + 2 * kBRows];  // x rows, W_gate rows, W_up rows: this thread's chunk of the last stage copied
  uint32_t offset;                     // shared offset of the first chunk
  int k;                               // this thread's k within a stage

  __device__ TileLoader(const bf16* x, const bf16* wg, const bf16* wu, int64_t M, int64_t dim, int64_t hidden,
                        int64_t m0, int64_t n0) {
    const uint32_t r = threadIdx.x / kChunks, c = threadIdx.x % kChunks;
    k = 8 * c;
    const int64_t kk = k < dim ? k : 0;  // dim < 64: a chunk past dim keeps its pointer on the row's first one
    const int64_t x_last = (M - m0 < kBM ? M - m0 : kBM) - 1, w_last = (hidden - n0 < kBN ? hidden - n0 : kBN) - 1;
#pragma unroll
    for (int i = 0; i < kARows; ++i) {
      const int64_t row = r + i * kRowStep < x_last ? r + i * kRowStep : x_last;
      p[i] = reinterpret_cast<const char*>(x + (m0 + row) * dim + kk);
    }
#pragma unroll
    for (int i = 0; i < kBRows; ++i) {
      const int64_t row = r + i * kRowStep < w_last ? r + i * kRowStep : w_last;
      p[kARows + i] = reinterpret_cast<const char*>(wg + (n0 + row) * dim + kk);
      p[kARows + kBRows + i] = reinterpret_cast<const char*>(wu + (n0 + row) * dim + kk);
    }
    offset = swizzled(r, c);
  }

  // Part `part` of 4 of stage `stage` <- k-columns [k0, k0 + kBK) of the tile's rows (x rows 2 part and 2 part + 1,
  // W_gate and W_up row part of this thread's), the stages in order from k0 = 0; nothing if !issue.
  __device__ __forceinline__ void load(int part, uint32_t stage, int64_t k0, int64_t dim, bool issue) {
    const bool k_in = k0 + k < dim;
    const int64_t step = k0 > 0 && k_in ? 2 * kBK : 0;  // stage 0: the pointers are on it already
    const uint32_t bytes = k_in ? 16 : 0;
    const uint32_t dst = stage + offset;
#pragma unroll
    for (int i = 2 * part; i < 2 * part + 2; ++i) {
      p[i] += step;
      cp_async16(dst + i * kRowStep * kRowBytes, p[i], bytes, issue);
    }
    const int i = kARows + part;
    p[i] += step;
    p[i + kBRows] += step;
    cp_async16(dst + kATile + part * kRowStep * kRowBytes, p[i], bytes, issue);
    cp_async16(dst + kATile + kBTile + part * kRowStep * kRowBytes, p[i + kBRows], bytes, issue);
  }
  __device__ __forceinline__ void load(uint32_t stage, int64_t k0, int64_t dim, bool issue) {
#pragma unroll
    for (int part = 0; part < 4; ++part) load(part, stage, k0, dim, issue);
  }
};
static_assert(TileLoader::kARows == 8 && TileLoader::kBRows == 4 && kKSteps == 4, "load parts: one per k-step");

// A bf16 pair as the float32 values of its low and high halves (exact: a bf16 is the top 16 bits of a float32), and two
// float32 rounded to bf16 and packed (one F2FP). __low2float / __high2float give the same bits in one more instruction.
__device__ __forceinline__ float low_f32(uint32_t pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float high_f32(uint32_t pair) { return __uint_as_float(pair & 0xffff0000u); }
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&p);
}

// Two outputs from two g and two u of adjacent columns: the rounding of kernels.cuh, packed as a bf16 pair.
__device__ __forceinline__ uint32_t gelu_times_up(float g0, float g1, float u0, float u1) {
  const uint32_t g = pack_bf16(g0, g1), u = pack_bf16(u0, u1);
  const uint32_t h = pack_bf16(ladder::gelu_tanh_f32_ftz(low_f32(g)), ladder::gelu_tanh_f32_ftz(high_f32(g)));
  return pack_bf16(__fmul_rn(low_f32(h), low_f32(u)), __fmul_rn(high_f32(h), high_f32(u)));
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
    TileLoader l(x, wg, wu, M, dim, hidden, t / n_tiles * kBM, t % n_tiles * kBN);
    for (int s = 0; s < kStages - 1; ++s) {
      l.load(stage(s), int64_t(s) * kBK, dim, true);  // past k_tiles: zeros, into a stage this tile never reads
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
  // Fragments: B of two k-steps (one in use, one loading); A of one, each A fragment reloaded for the next k-step
  // as soon as this one's last mma has read it (i-major order: 8 mma per A fragment), which frees 16 registers.
  uint32_t a[kMT][4], bg[2][kNT][2], bu[2][kNT][2];
  auto load_a = [&](int i, uint32_t st, int s) {
    ldmatrix_x4(st + (a_addr ^ (s << 5)) + i * 16 * kRowBytes, a[i][0], a[i][1], a[i][2], a[i][3]);
  };
  auto load_b = [&](int buf, uint32_t st, int s) {
    const uint32_t bo = st + (b_addr ^ (s << 5));
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
      for (int i = 0; i < kMT; ++i) load_a(i, stage(0), 0);
      load_b(0, stage(0), 0);
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      // This k-tile refills the stage every warp finished reading before the last __syncthreads, a quarter of its
      // copies per k-step, between the mma.
      const int kn = kt + kStages - 1;
      const uint32_t refill = stage(kn);
#pragma unroll
      for (int s = 0; s < kKSteps; ++s) {
        loader.load(s, refill, int64_t(kn) * kBK, dim, kn < k_tiles);
        if (s == kKSteps - 1) {  // the next stage must have landed before its first fragments are read
          cp_async_commit();
          cp_async_wait<kStages - 2>();
          __syncthreads();
        }
        // Fragments of the next k-step load while this one's mma run.
        const bool more = s + 1 < kKSteps || kt + 1 < k_tiles;
        const uint32_t next = s + 1 < kKSteps ? stage(kt) : stage(kt + 1);
        const int next_s = (s + 1) % kKSteps;
        if (more) load_b((s + 1) % 2, next, next_s);
#pragma unroll
        for (int i = 0; i < kMT; ++i) {
#pragma unroll
          for (int j = 0; j < kNT; ++j) {
            mma_bf16(acc_g[i][j], a[i], bg[s % 2][j][0], bg[s % 2][j][1]);
            mma_bf16(acc_u[i][j], a[i], bu[s % 2][j][0], bu[s % 2][j][1]);
          }
          if (more) load_a(i, next, next_s);
        }
      }
    }
    // Every warp is done with the stages: the next tile's loads start now and run during the epilogue.
    __syncthreads();
    if (tile + gridDim.x < tiles) loader = start_tile(tile + gridDim.x);

    // The epilogue, register to register: every output first (independent chains the scheduler can interleave), then
    // each lane stores its pairs of adjacent outputs straight to m, those inside the matrix.
    uint32_t out[kMT][kNT][2];
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          out[i][j][h] =
              gelu_times_up(acc_g[i][j][2 * h], acc_g[i][j][2 * h + 1], acc_u[i][j][2 * h], acc_u[i][j][2 * h + 1]);
    const int64_t m0 = tile / n_tiles * kBM + wm * kWM + lane / 4,
                  n0 = tile % n_tiles * kBN + wn * kWN + 2 * (lane % 4);
    // This lane's rows and columns inside m, at most the warp tile's (hidden is even, so col + 1 is inside with col).
    const int rows_in = int(M - m0 < kWM ? M - m0 : kWM), cols_in = int(hidden - n0 < kWN ? hidden - n0 : kWN);
    bf16* const dst = m + m0 * hidden + n0;
    bf16* rows[kMT][2];  // every row's address first: none is overwritten while a store may still be reading it
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) rows[i][h] = dst + (16 * i + 8 * h) * hidden;
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const bool row_in = 16 * i + 8 * h < rows_in;
        st_global_if<0>(rows[i][h], out[i][0][h], row_in && 0 < cols_in);
        st_global_if<16>(rows[i][h], out[i][1][h], row_in && 8 < cols_in);
        st_global_if<32>(rows[i][h], out[i][2][h], row_in && 16 < cols_in);
        st_global_if<48>(rows[i][h], out[i][3][h], row_in && 24 < cols_in);
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
