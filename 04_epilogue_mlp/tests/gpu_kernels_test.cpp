// GPU tests of chapter 04's geglu_gemm kernels. Every test iterates the variant list, so a variant you add to it is
// tested here with no other change. Without a GPU every test skips; a variant the GPU cannot run (the Hopper ones
// anywhere but on sm_90) is left out, and a test with none left skips.
//
// What is checked, for every variant:
//  - against a float64 CPU reference that rounds g, u, gelu(g) and the product to bf16 where eager PyTorch stores them,
//    on fresh random inputs, for M = 1, 3, 127, 8191, 8192 at the blog's dim 768 / hidden 3072 and for odd tile tails
//    (M, dim or hidden not a multiple of any tile size); big outputs check a sample of rows (all columns);
//  - every output element is written: the output starts poisoned with NaN and must hold none afterwards, and nothing
//    past its end is touched;
//  - the promise of the chapter: the output is bit for bit chapter 03's (cuBLASLt gate and up, then 03's gelu_mul), at
//    the blog's shape and at odd ones, and for all 65536 values a bf16 g can take (the whole GELU, exhaustively). The
//    portable variant sums its dot products in another order than cuBLAS, so for it the test prints how many outputs
//    lie 0, 1, 2, ... bf16 ulps from 03's and fails only above kPortableMaxUlps; NaN, infinities and unwritten
//    outputs fail every variant;
//  - the rules: dim or hidden not a multiple of 8, misaligned pointers and an m overlapping an input are refused with a
//    ladder::Error naming the rule; M = 0 launches nothing; dim = 0 gives zeros;
//  - the op: the named variant runs ("" = the GPU's default), a bad name is a UsageError listing the names, bad
//    tensors are refused.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "03_fused_mlp/kernels.cuh"  // chapter 03's gelu_mul, for the bit-identity tests
#include "04_epilogue_mlp/kernels.cuh"
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"
#include "hopper/launch.h"  // persistent_grid

namespace {

using ladder::DType;
using ladder::Tensor;
using namespace ladder::testing;  // SKIP_WITHOUT_GPU, GuardedOutput, bits_of, kPoisonBits

// The variants this GPU runs (geglu_gemm_cannot_run is empty for them), or only the one LADDER_TEST_VARIANT names (the
// PTX-path ctest runs the portable variant alone: the Hopper variants have no PTX to compile).
std::vector<ch04::GegluGemmVariant> runnable_variants() {
  const char* only = std::getenv("LADDER_TEST_VARIANT");
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  std::vector<ch04::GegluGemmVariant> runnable;
  for (const ch04::GegluGemmVariant& v : ch04::geglu_gemm_variants())
    if (ch04::geglu_gemm_cannot_run(v.name, major, minor).empty() && (!only || std::string(only) == v.name))
      runnable.push_back(v);
  return runnable;
}

// The first line of every test below: skip without a GPU (or fail under LADDER_REQUIRE_GPU=1), skip on a GPU that
// runs none of the variants (older than sm_80); else `variants` holds those it runs.
#define SKIP_WITHOUT_VARIANTS(variants)                                     \
  SKIP_WITHOUT_GPU();                                                       \
  const std::vector<ch04::GegluGemmVariant> variants = runnable_variants(); \
  if (variants.empty()) GTEST_SKIP() << "this GPU runs none of the geglu_gemm variants"

// One problem: random x [M, dim] in [-1, 1] and weights in nn.Linear's range, on the host and the GPU.
struct Problem {
  int64_t M, dim, hidden;
  std::vector<float> x, gate, up;
  Tensor dx, dgate, dup;
  Problem(int64_t M_, int64_t dim_, int64_t hidden_, std::vector<float> x_, std::vector<float> gate_,
          std::vector<float> up_)
      : M(M_), dim(dim_), hidden(hidden_), x(std::move(x_)), gate(std::move(gate_)), up(std::move(up_)) {
    dx = ladder::to_device(x, {M, dim}, DType::BF16);
    dgate = ladder::to_device(gate, {hidden, dim}, DType::BF16);
    dup = ladder::to_device(up, {hidden, dim}, DType::BF16);
  }
  Problem(int64_t M_, int64_t dim_, int64_t hidden_, uint64_t seed)
      : Problem(M_, dim_, hidden_, ladder::random_values(M_ * dim_, seed, DType::BF16),
                ladder::random_values(hidden_ * dim_, seed + 1, DType::BF16, -bound(dim_), bound(dim_)),
                ladder::random_values(hidden_ * dim_, seed + 2, DType::BF16, -bound(dim_), bound(dim_))) {}
  static float bound(int64_t dim) { return 1.0f / std::sqrt(float(dim)); }  // nn.Linear's init range
  // Row r of m in float64, rounded to bf16 where eager mode stores a tensor: g, u, gelu(g), the product. Each row is
  // computed once and kept, since every variant is checked against the same rows.
  void reference_row(int64_t r, double* out) const {
    std::vector<double>& row = rows_[r];
    if (row.empty()) {
      const auto bf16 = [](double v) { return double(ladder::round_to(DType::BF16, float(v))); };
      row.resize(hidden);
      for (int64_t n = 0; n < hidden; ++n) {
        double g = 0, u = 0;
        for (int64_t k = 0; k < dim; ++k) {
          g += double(x[r * dim + k]) * gate[n * dim + k];
          u += double(x[r * dim + k]) * up[n * dim + k];
        }
        row[n] = bf16(bf16(ladder::ref::gelu_tanh(bf16(g))) * bf16(u));
      }
    }
    std::copy(row.begin(), row.end(), out);
  }
  mutable std::map<int64_t, std::vector<double>> rows_;
  // Chapter 03's m: cuBLASLt gate and up GEMMs writing g and u, then 03's gelu_mul.
  std::vector<uint16_t> chapter03_bits() const {
    const Tensor g = ladder::empty({M, hidden}, DType::BF16), u = ladder::empty({M, hidden}, DType::BF16);
    const Tensor m = ladder::empty({M, hidden}, DType::BF16);
    ladder::ops::linear(dx, dgate, nullptr, g);
    ladder::ops::linear(dx, dup, nullptr, u);
    ch03::gelu_mul(g, u, m);
    CUDA_CHECK(cudaDeviceSynchronize());
    return bits_of(m.data, M * hidden);
  }
  void launch(const ch04::GegluGemmVariant& v, const Tensor& m) const {
    v.launch(dx.ptr<bf16>(), dgate.ptr<bf16>(), dup.ptr<bf16>(), m.ptr<bf16>(), M, dim, hidden, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
};

// Bf16 rounding of g and u can differ from the float64 reference's in the last bit where cuBLAS-like float32 sums land
// near a rounding boundary; the rest of the chain then differs by a bf16 ulp or two. Tighter than tolerance_for(BF16)
// (1e-2 absolute): m is ~0.05 on these inputs, and a kernel that paired g with the wrong u would slip through that.
const ladder::Tolerance kTol{1e-3, 1.0 / 64};

// Counts elements that still hold the poison (NaN bits): an element no thread wrote.
int64_t unwritten(const Tensor& m) {
  int64_t n = 0;
  for (uint16_t b : bits_of(m.data, m.numel())) n += b == kPoisonBits;
  return n;
}

struct Shape3 {
  int64_t M, dim, hidden;
};
// The blog's dim/hidden at row counts around the tile sizes (64, 128), then odd tile tails in every direction.
const std::vector<Shape3> kProblemShapes = {{1, 768, 3072},    {3, 768, 3072},   {127, 768, 3072}, {8191, 768, 3072},
                                            {8192, 768, 3072}, {300, 200, 200},  {5, 64, 136},     {3, 24, 16},
                                            {129, 1000, 1032}, {2500, 192, 2048}};

// The variants the chapter names: "teach", the one its README reads first, "fast", the default on sm_90, and
// "portable", the default everywhere else. Nothing depends on their order in the list.
TEST(EpilogueKernels, TheTaughtAndTheDefaultVariantsExist) {
#if LADDER_HAVE_SM90A
  EXPECT_NO_THROW(ch04::find_geglu_gemm_variant("teach"));
  EXPECT_NO_THROW(ch04::find_geglu_gemm_variant("fast"));
#endif
  EXPECT_NO_THROW(ch04::find_geglu_gemm_variant("portable"));
}

TEST(EpilogueKernels, EveryVariantMatchesCpuReference) {
  SKIP_WITHOUT_VARIANTS(variants);
  for (size_t s = 0; s < kProblemShapes.size(); ++s) {
    const auto [M, dim, hidden] = kProblemShapes[s];
    const Problem p(M, dim, hidden, 100 + 10 * s);  // fresh inputs for every shape
    GuardedOutput out({M, hidden});
    for (const ch04::GegluGemmVariant& v : variants) {
      SCOPED_TRACE(std::string("variant ") + v.name + ", M " + std::to_string(M) + ", dim " + std::to_string(dim) +
                   ", hidden " + std::to_string(hidden));
      out.poison();
      p.launch(v, out.view);
      EXPECT_EQ(unwritten(out.view), 0) << "elements left unwritten";
      EXPECT_TRUE(out.guard_untouched()) << "wrote past the end of the output";
      const ladder::CompareResult r = ladder::compare_rows(
          ladder::to_host(out.view), M, hidden, [&](int64_t row, double* ref) { p.reference_row(row, ref); }, kTol, 48);
      EXPECT_TRUE(r.ok) << r.mismatches << " of " << r.checked << " values differ\n" << r.report;
    }
  }
}

// Every GPU of the machine in one process, one after the other: a launcher's once-only set-up (the shared-memory
// attribute, the device's SM count) is per device, so a variant that ran on GPU 0 must run on GPU 1 too. On a machine
// with one GPU this is the test above at one shape; with two or more it is the case a per-process set-up breaks.
TEST(EpilogueKernels, EveryGpuInOneProcess) {
  SKIP_WITHOUT_GPU();
  int devices = 0, first = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaGetDevice(&first));
  for (int d = 0; d < devices; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    const std::vector<ch04::GegluGemmVariant> variants = runnable_variants();
    const Problem p(300, 200, 200, 7 + d);
    GuardedOutput out({p.M, p.hidden});
    for (const ch04::GegluGemmVariant& v : variants) {
      SCOPED_TRACE(std::string("variant ") + v.name + " on GPU " + std::to_string(d));
      out.poison();
      p.launch(v, out.view);
      EXPECT_EQ(unwritten(out.view), 0) << "elements left unwritten";
      const ladder::CompareResult r = ladder::compare_rows(
          ladder::to_host(out.view), p.M, p.hidden, [&](int64_t row, double* ref) { p.reference_row(row, ref); },
          kTol, 48);
      EXPECT_TRUE(r.ok) << r.mismatches << " of " << r.checked << " values differ\n" << r.report;
    }
    std::cout << "[ every GPU ] GPU " << d << ": " << variants.size() << " variants checked\n";
  }
  CUDA_CHECK(cudaSetDevice(first));
}

// How far a variant's outputs lie from chapter 03's, in bf16 ulps: counts[d] outputs at d ulps (d = 0: same bits).
// NaN equals NaN; an output that is NaN or infinite where 03's is not (an unwritten output still holds the NaN poison),
// or the reverse, is "broken" and fails every variant.
struct UlpDistribution {
  std::map<int64_t, int64_t> counts;
  int64_t broken = 0, first_broken = -1;
  int64_t max_ulps() const { return counts.empty() ? 0 : counts.rbegin()->first; }
  std::string str() const {
    std::string s;
    for (auto [d, n] : counts) s += (s.empty() ? "" : ", ") + std::to_string(n) + " at " + std::to_string(d);
    return s + " ulps; " + std::to_string(broken) + " NaN/inf/unwritten";
  }
};
UlpDistribution ulps_from(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want) {
  const auto special = [](uint16_t b) { return (b & 0x7F80) == 0x7F80; };  // NaN or infinity
  const auto ordered = [](uint16_t b) { return (b & 0x8000) ? -int64_t(b & 0x7FFF) : int64_t(b); };
  UlpDistribution u;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool both_nan = (got[i] & 0x7FFF) > 0x7F80 && (want[i] & 0x7FFF) > 0x7F80;
    if (both_nan || (got[i] == want[i])) {
      ++u.counts[0];
    } else if (special(got[i]) || special(want[i])) {
      if (u.broken++ == 0) u.first_broken = int64_t(i);
    } else {
      ++u.counts[std::abs(ordered(got[i]) - ordered(want[i]))];
    }
  }
  return u;
}

// The portable variant adds its products in another order than cuBLAS, so g and u may round to a neighbouring bf16;
// gelu and the product then carry that one step on. Further than this from 03's output is a wrong kernel.
constexpr int64_t kPortableMaxUlps = 4;

// The chapter's promise: one kernel instead of three, and not one bit different. Any rounding the epilogue skipped
// (or did in another order) would show up here first. The portable variant: the distribution, within the bound.
TEST(EpilogueKernels, BitIdenticalToChapter03) {
  SKIP_WITHOUT_VARIANTS(variants);
  for (const Shape3& s : {Shape3{8192, 768, 3072}, Shape3{300, 200, 200}, Shape3{127, 768, 3072}, Shape3{3, 24, 16},
                          Shape3{129, 1000, 1032}}) {
    const Problem p(s.M, s.dim, s.hidden, 900 + s.M);
    const std::vector<uint16_t> want = p.chapter03_bits();
    const Tensor m = ladder::empty({s.M, s.hidden}, DType::BF16);
    for (const ch04::GegluGemmVariant& v : variants) {
      SCOPED_TRACE(std::string("variant ") + v.name + ", M " + std::to_string(s.M) + ", dim " + std::to_string(s.dim) +
                   ", hidden " + std::to_string(s.hidden));
      ladder::poison(m);
      p.launch(v, m);
      const std::vector<uint16_t> got = bits_of(m.data, m.numel());
      const UlpDistribution u = ulps_from(got, want);
      EXPECT_EQ(u.broken, 0) << "first at row " << u.first_broken / s.hidden << ", column " << u.first_broken % s.hidden
                             << ": chapter 03 0x" << std::hex << want[u.first_broken] << ", 04 0x"
                             << got[u.first_broken];
      if (std::string(v.name) == "portable") {
        std::cout << "[ portable ] M " << s.M << ", dim " << s.dim << ", hidden " << s.hidden << ": outputs at "
                  << u.str() << " from chapter 03's\n";
        EXPECT_LE(u.max_ulps(), kPortableMaxUlps) << u.str();
        continue;
      }
      int64_t differ = 0, first = -1;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && differ++ == 0) first = int64_t(i);
      EXPECT_EQ(differ, 0) << "of " << got.size() << "; first at row " << first / s.hidden << ", column "
                           << first % s.hidden << ": chapter 03 0x" << std::hex << want[first] << ", 04 0x"
                           << got[first] << " (" << u.str() << ")";
    }
  }
}

// Under a GemmSmLimit (07_tp_mlp's overlap leaves SMs to NCCL with one) the persistent variants spread their tiles
// over fewer blocks; every variant still writes every output, the same bits as with the whole GPU.
TEST(EpilogueKernels, FewerSmsSameBits) {
  SKIP_WITHOUT_VARIANTS(variants);
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  EXPECT_EQ(hopper::persistent_grid(64, 48, 12, "geglu_gemm"), std::min(64 * 48, sms));
  {
    const ladder::GemmSmLimit limit(7);
    EXPECT_EQ(hopper::persistent_grid(64, 48, 12, "geglu_gemm"), 7);
    EXPECT_EQ(hopper::persistent_grid(2, 2, 12, "geglu_gemm"), 4);
  }
  for (const Shape3& s : {Shape3{8192, 768, 3072}, Shape3{129, 1000, 1032}, Shape3{3, 24, 16}}) {
    const Problem p(s.M, s.dim, s.hidden, 1300 + s.M);
    const Tensor whole = ladder::empty({s.M, s.hidden}, DType::BF16);
    const Tensor fewer = ladder::empty({s.M, s.hidden}, DType::BF16);
    for (const ch04::GegluGemmVariant& v : variants) {
      SCOPED_TRACE(std::string("variant ") + v.name + ", M " + std::to_string(s.M));
      ladder::poison(whole);
      ladder::poison(fewer);
      p.launch(v, whole);
      {
        const ladder::GemmSmLimit limit(7);
        p.launch(v, fewer);
      }
      EXPECT_EQ(unwritten(fewer), 0);
      EXPECT_EQ(bits_of(fewer.data, fewer.numel()), bits_of(whole.data, whole.numel()));
    }
  }
}

// Every value g can take: with x = e_0 (1 at k = 0), W_gate[n, 0] = the bf16 with bits n and W_up[n, 0] = 1, column n
// of m is gelu(g) for g = that bf16, exactly (one product, no sum), for all 65536 n. Compared with chapter 03's path
// bit for bit; NaN equals NaN (gelu(NaN) and gelu(-inf) are NaN in both).
TEST(EpilogueKernels, WholeGeluBitIdenticalToChapter03) {
  SKIP_WITHOUT_VARIANTS(variants);
  const int64_t M = 64, dim = 8, hidden = 65536;
  std::vector<float> x(M * dim, 0.0f), gate(hidden * dim, 0.0f), up(hidden * dim, 0.0f);
  for (int64_t r = 0; r < M; ++r) x[r * dim] = 1.0f;
  for (int64_t n = 0; n < hidden; ++n) {
    gate[n * dim] = ladder::bf16_bits_to_float(static_cast<uint16_t>(n));
    up[n * dim] = 1.0f;
  }
  const Problem p(M, dim, hidden, x, gate, up);
  const std::vector<uint16_t> want = p.chapter03_bits();
  const Tensor m = ladder::empty({M, hidden}, DType::BF16);
  const auto is_nan = [](uint16_t b) { return (b & 0x7FFF) > 0x7F80; };
  for (const ch04::GegluGemmVariant& v : variants) {
    ladder::poison(m);
    p.launch(v, m);
    const std::vector<uint16_t> got = bits_of(m.data, m.numel());
    int64_t differ = 0, first = -1;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && !(is_nan(got[i]) && is_nan(want[i])) && differ++ == 0) first = int64_t(i);
    EXPECT_EQ(differ, 0) << v.name << ": first at g bits 0x" << std::hex << first % hidden << ": chapter 03 0x"
                         << want[first] << ", 04 0x" << got[first];
  }
}

TEST(EpilogueKernels, RefuseWhatTheKernelsCannotTake) {
  SKIP_WITHOUT_VARIANTS(variants);
  const Tensor buf = ladder::empty({1 << 16}, DType::BF16);
  bf16* b = buf.ptr<bf16>();
  for (const ch04::GegluGemmVariant& v : variants) {
    SCOPED_TRACE(v.name);
    const auto refuses = [&](const bf16* x, const bf16* wg, const bf16* wu, bf16* m, int64_t M, int64_t dim,
                             int64_t hidden, const std::string& words) {
      try {
        v.launch(x, wg, wu, m, M, dim, hidden, 0);
        ADD_FAILURE() << "accepted: " << words;
      } catch (const ladder::Error& e) {
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      }
    };
    refuses(b, b, b, b, 4, 60, 64, "dim = 60 is not a multiple of 8: the kernels copy 16 bytes");
    refuses(b, b, b, b, 4, 64, 60, "hidden = 60 is not a multiple of 8: the kernels copy 16 bytes");
    refuses(b + 1, b, b, b, 4, 64, 64, "x is not 16-byte aligned");
    refuses(b, b, b + 1, b, 4, 64, 64, "w_up is not 16-byte aligned");
    refuses(b, b, b, b + 1, 4, 64, 64, "m is not 16-byte aligned");
    refuses(b, b, b, b, -1, 64, 64, "sizes must be >= 0");
    // m over an input (x: 4 x 64 values at b, w_gate and w_up 64 x 64 after it): a GEMM cannot run in place.
    bf16 *x = b, *wg = b + 256, *wu = b + 256 + 4096, *m = b + 256 + 2 * 4096;
    refuses(x, wg, wu, x, 4, 64, 64, "m overlaps x");
    refuses(x, wg, wu, wg + 4088, 4, 64, 64, "m overlaps w_gate");  // their last 8 values
    refuses(x, wg, wu, wu + 4088, 4, 64, 64, "m overlaps w_up");    // w_up's last 8 values
    EXPECT_NO_THROW(v.launch(x, wg, wu, m, 4, 64, 64, 0));          // side by side: fine
    CUDA_CHECK(cudaDeviceSynchronize());
    // Nothing to do: no launch, no error left behind.
    EXPECT_NO_THROW(v.launch(b, b, b, b, 0, 64, 64, 0));
    EXPECT_NO_THROW(v.launch(b, b, b, b, 4, 64, 0, 0));
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    // dim = 0: every dot product is empty, m = gelu(0) * 0 = 0.
    ladder::poison(buf);
    v.launch(b, b, b, b, 4, 0, 64, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (uint16_t bits : bits_of(b, 4 * 64)) ASSERT_EQ(bits, 0);
  }
}

TEST(EpilogueOps, RunTheNamedVariant) {
  SKIP_WITHOUT_VARIANTS(variants);
  const Problem p(37, 64, 136, 4242);
  const Tensor x3 = p.dx.reshape({1, 37, 64});  // [batch, seq, dim], as the chapter passes it
  const Tensor m = ladder::empty({1, 37, 136}, DType::BF16);
  std::vector<std::string> names{""};  // "" = the default argument
  for (const ch04::GegluGemmVariant& v : variants) names.push_back(v.name);
  for (const std::string& name : names) {
    SCOPED_TRACE("variant '" + name + "'");
    ladder::poison(m);
    if (name.empty())
      ch04::geglu_gemm(x3, p.dgate, p.dup, m);
    else
      ch04::geglu_gemm(x3, p.dgate, p.dup, m, name);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto r = ladder::compare_rows(
        ladder::to_host(m), 37, 136, [&](int64_t row, double* ref) { p.reference_row(row, ref); }, kTol);
    EXPECT_TRUE(r.ok) << r.report;
  }
}

TEST(EpilogueOps, RefuseBadTensorsAndNames) {
  SKIP_WITHOUT_VARIANTS(variants);
  const Tensor x = ladder::empty({16, 64}, DType::BF16), w = ladder::empty({32, 64}, DType::BF16);
  const Tensor m = ladder::empty({16, 32}, DType::BF16);
  EXPECT_THROW(ch04::geglu_gemm(ladder::empty({16, 64}, DType::F32), w, w, m), ladder::Error);
  EXPECT_THROW(ch04::geglu_gemm(x, w, ladder::empty({32, 56}, DType::BF16), m), ladder::Error);  // up's dim
  EXPECT_THROW(ch04::geglu_gemm(x, w, w, ladder::empty({16, 31}, DType::BF16)), ladder::Error);  // m's size
  EXPECT_THROW(ch04::geglu_gemm(x, w.t(), w, m), ladder::Error);                                 // not contiguous
  try {  // m written over x: the op's message names the rule
    ch04::geglu_gemm(x, w, w, ladder::view_of(x.data, DType::BF16, {16, 32}));
    ADD_FAILURE() << "an m overlapping x was accepted";
  } catch (const ladder::Error& e) {
    EXPECT_NE(std::string(e.what()).find("m overlaps x: a GEMM reads its inputs"), std::string::npos) << e.what();
  }
  try {
    ch04::geglu_gemm(x, w, w, m, "fastest");
    FAIL() << "an unknown variant name was accepted";
  } catch (const ladder::UsageError& e) {
    const std::string what = e.what();
    for (const ch04::GegluGemmVariant& v : variants)
      EXPECT_NE(what.find(v.name), std::string::npos) << "the message should list '" << v.name << "': " << what;
  }
}

}  // namespace
