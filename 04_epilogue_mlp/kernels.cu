// Chapter 04's host side: the rules every geglu_gemm launcher enforces, a problem's tensor maps (built once, with the
// Hopper room's tile_map: hopper/launch.h), the variant list, and the op geglu_gemm itself. The kernels are in the
// variant files, one per file, in reading order: 1_teach.cu .. 5_fast.cu (Hopper, sm_90a) and portable.cu (sm_80 and
// later); kernels.cuh says what each adds.
//
// LADDER_HAVE_SM90A (set by add_chapter, cmake/Ladder.cmake) says whether this build compiled the Hopper variant files:
// only a build whose CMAKE_CUDA_ARCHITECTURES include 90 does, for sm_90a (wgmma, TMA and setmaxnreg exist only in the
// "a" target: -gencode arch=compute_90a,code=sm_90a).
#include <climits>
#include <string>
#include <tuple>

#include "04_epilogue_mlp/kernels.cuh"
#include "04_epilogue_mlp/launch.h"
#include "04_epilogue_mlp/portable.cuh"
#include "cuda/check.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "hopper/map_cache.h"

namespace ch04 {

using bf16 = __nv_bfloat16;

// ---------------------------------------------------------------------------------------------------------------
// The rules.

std::string shape_str(int64_t M, int64_t dim, int64_t hidden) {
  return "M = " + std::to_string(M) + ", dim = " + std::to_string(dim) + ", hidden = " + std::to_string(hidden);
}

// Every failure below is a ladder::Error: the chapter prints its one line and exits 1 (a shape the reader chose is
// caught earlier, in main, as a usage error with the same words).
void fail(const std::string& what) { throw ladder::Error("geglu_gemm: " + what); }

std::string geglu_gemm_shape_rule(int64_t dim, int64_t hidden) {
  for (auto [what, n, rows] : {std::tuple{"dim", dim, "x, w_gate and w_up"}, {"hidden", hidden, "m"}})
    if (n % 8 != 0)
      return std::string(what) + " = " + std::to_string(n) +
             " is not a multiple of 8: the kernels copy 16 bytes at a " + "time (TMA, cp.async), so every row of " +
             rows + " must start on a 16-byte boundary (8 bf16 values)";
  return "";
}

std::string geglu_gemm_overlap_rule(const void* x, const void* w_gate, const void* w_up, const void* m, int64_t M,
                                    int64_t dim, int64_t hidden) {
  const auto at = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  const uint64_t m_bytes = uint64_t(M) * uint64_t(hidden) * sizeof(bf16);
  const uint64_t x_bytes = uint64_t(M) * uint64_t(dim) * sizeof(bf16), w_bytes = uint64_t(hidden) * dim * sizeof(bf16);
  for (auto [name, p, bytes] : {std::tuple{"x", x, x_bytes}, {"w_gate", w_gate, w_bytes}, {"w_up", w_up, w_bytes}})
    if (m_bytes > 0 && bytes > 0 && at(m) < at(p) + bytes && at(p) < at(m) + m_bytes)
      return std::string("m overlaps ") + name + ": a GEMM reads its inputs again and again while it writes m, so m " +
             "must share no byte with x, w_gate or w_up";
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// The variants. The Hopper ones only where this build compiled them (LADDER_HAVE_SM90A), then the portable one.

namespace {

#if LADDER_HAVE_SM90A
const std::vector<GegluGemmVariant> kHopperVariants = {
    {"teach", "one 64x128 tile per block: one consumer warpgroup (wgmma m64n256 over 128 gate + 128 up rows), 4 stages",
     launch_teach},
    {"pingpong",
     "persistent; two consumer warpgroups alternate main loop and epilogue on 128x64 tiles (2x m64n128), 6 stages",
     launch_pingpong},
    {"coop", "persistent; both consumers on one 128x128 tile (each m64n256 on 64 rows), 4 stages, grouped order",
     launch_coop},
    {"overlap", "as coop; each consumer runs its previous tile's epilogue in 8 chunks between its next tile's wgmma",
     launch_overlap},
    {"fast",
     "as overlap, with flush-to-zero EX2/RCP and a bf16x2 multiply in the epilogue (same bits, fewer instructions)",
     launch_fast},
};
#else
const std::vector<GegluGemmVariant> kHopperVariants = {};
#endif

// The portable variant's launcher: the same rules as every other, then portable.cu's kernel.
void launch_portable_checked(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim,
                             int64_t hidden, cudaStream_t stream) {
  if (!check_launch("portable", x, w_gate, w_up, m, M, dim, hidden, stream)) return;
  launch_portable(x, w_gate, w_up, m, M, dim, hidden, stream);
}

bool is_hopper_variant(const std::string& name) {
  for (const GegluGemmVariant& v : kHopperVariants)
    if (name == v.name) return true;
  return false;
}

}  // namespace

const std::vector<GegluGemmVariant>& geglu_gemm_variants() {
  static const std::vector<GegluGemmVariant> variants = [] {
    std::vector<GegluGemmVariant> all = kHopperVariants;
    all.push_back(
        {"portable",
         "mma.sync m16n8k16, ldmatrix and a cp.async pipeline: every GPU from sm_80 on (the default but on sm_90)",
         launch_portable_checked});
    return all;
  }();
  return variants;
}

const GegluGemmVariant& find_geglu_gemm_variant(const std::string& name) {
  return ladder::find_variant(geglu_gemm_variants(), name, "geglu_gemm");
}

std::string geglu_gemm_cannot_run(const std::string& variant, int major, int minor) {
  find_geglu_gemm_variant(variant);  // an unknown name is a usage error
  const std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  if (is_hopper_variant(variant)) {
    if (major == 9 && minor == 0) return "";
    return "the " + variant + " variant needs a Hopper GPU (sm_90: wgmma and TMA; this one is " + sm +
           "); --kernel portable runs here, and traces/reference/h100/04_epilogue_mlp.json in the ladder's source "
           "tree is its H100 trace";
  }
  if (major >= 8) return "";
  return "the " + variant + " variant needs compute capability 8.0 or later (bf16 mma.sync and cp.async; this one is " +
         sm + ")";
}

const char* geglu_gemm_default_variant(int major, int minor) {
  return major == 9 && minor == 0 && !kHopperVariants.empty() ? "fast" : "portable";
}

// ---------------------------------------------------------------------------------------------------------------
// The launch helper (launch.h): the checks and the four tensor maps of a problem.

bool check_launch(const char* variant, const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M,
                  int64_t dim, int64_t hidden, cudaStream_t stream) {
  if (M < 0 || dim < 0 || hidden < 0) fail("sizes must be >= 0 (" + shape_str(M, dim, hidden) + ")");
  if (const std::string rule = geglu_gemm_shape_rule(dim, hidden); !rule.empty()) fail(rule);
  if (M > INT_MAX || dim > INT_MAX || hidden > INT_MAX)
    fail("sizes must be < 2^31 (tile coordinates are 32-bit; " + shape_str(M, dim, hidden) + ")");
  if (M == 0 || hidden == 0) return false;
  const struct {
    const void* p;
    const char* name;
  } ptrs[] = {{x, "x"}, {w_gate, "w_gate"}, {w_up, "w_up"}, {m, "m"}};
  for (const auto& q : ptrs)
    if (reinterpret_cast<uintptr_t>(q.p) % 16 != 0)
      fail(std::string(q.name) +
           " is not 16-byte aligned: the kernels copy 16 bytes at a time from 16-byte boundaries");
  if (const std::string rule = geglu_gemm_overlap_rule(x, w_gate, w_up, m, M, dim, hidden); !rule.empty()) fail(rule);
  const DeviceInfo& gpu = current_device();
  if (const std::string why = geglu_gemm_cannot_run(variant, gpu.major, gpu.minor); !why.empty()) fail(why);
  if (dim == 0) {
    CUDA_CHECK(cudaMemsetAsync(m, 0, static_cast<size_t>(M) * hidden * sizeof(bf16), stream));
    return false;
  }
  return true;
}

TileMaps tile_maps(const bf16* x, const bf16* w_gate, const bf16* w_up, bf16* m, int64_t M, int64_t dim, int64_t hidden,
                   int x_rows, int w_rows, int m_rows) {
  // The last few problems' maps: a forward's one problem, a test's handful. 16 x 512 bytes.
  static SmallCache<ProblemKey, TileMaps, 16> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const ProblemKey key{device, x, w_gate, w_up, m, M, dim, hidden, x_rows, w_rows, m_rows};
  return cache.get(key, [&] {
    const char* op = "geglu_gemm";
    return TileMaps{tile_map(x, M, dim, dim, x_rows, "x", op), tile_map(w_gate, hidden, dim, dim, w_rows, "w_gate", op),
                    tile_map(w_up, hidden, dim, dim, w_rows, "w_up", op),
                    tile_map(m, M, hidden, hidden, m_rows, "m", op)};
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The op.

void geglu_gemm(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                const ladder::Tensor& m, const std::string& variant) {
  ladder::OpRange range("ladder::geglu_gemm", {&x, &w_gate, &w_up});  // ours, not an aten op: one kernel inside
  const std::string name =
      variant.empty() ? geglu_gemm_default_variant(current_device().major, current_device().minor) : variant;
  const GegluGemmVariant& v = find_geglu_gemm_variant(name);
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
