// GPU tests of the fused chapter's gelu_mul kernel. Every test iterates the variant list, so a variant you add in
// kernels.cu is tested here with no other change. Without a GPU every test skips.
//
// What is checked, for every variant:
//  - against a float64 CPU reference with bf16 tolerance, on fresh random inputs in [-6, 6] (so gelu's flat tails are
//    exercised), for sizes that are and are not multiples of the 8-element vector (1, 7, 8, 9, 1000003) and the blog's
//    [8192, 3072]; outputs are poisoned with NaN first, so an element a kernel forgot to write fails;
//  - nothing is written past the end of the output;
//  - pointers that are not 16-byte aligned (a view starting at element 1) still give the right answer;
//  - fusion changes memory traffic, not numbers: the output is bit for bit the eager chapter's mul(gelu(g), u);
//  - the op refuses wrong dtypes, strides, sizes and variant names with a clear error.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
#include "03_simple_mlp/kernels.cuh"  // the eager gelu and mul, for the bit-identity test
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"

namespace {

using ladder::DType;
using ladder::Shape;
using ladder::Tensor;

using namespace ladder::testing;  // SKIP_WITHOUT_GPU, kShapes, GuardedOutput, ... (common/gpu/tests/kernel_test_util.h)

// What the numbers say the fused kernel computes: gelu in float64, rounded to bf16 where eager mode stores h, times u.
std::vector<double> gelu_mul_reference(const std::vector<float>& g, const std::vector<float>& u) {
  std::vector<double> ref(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const float h = ladder::round_to(DType::BF16, static_cast<float>(ladder::ref::gelu_tanh(g[i])));
    ref[i] = static_cast<double>(h) * u[i];
  }
  return ref;
}

// --kernel NAME means the same in both chapters: the fused list carries the eager lists' names (in any order), with
// "vec", the default of the op and the chapter, among them.
TEST(FusedKernels, NamesMatchEager) {
  std::set<std::string> fused, eager;
  for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) fused.insert(v.name);
  for (const ch03::GeluVariant& v : ch03::gelu_variants()) eager.insert(v.name);
  EXPECT_EQ(fused, eager);
  EXPECT_NO_THROW(ch03::find_gelu_mul_variant("vec"));
}

TEST(FusedKernels, GeluMulVariantsMatchCpuReference) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> g = ladder::random_values(n, 7000 + s, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> u = ladder::random_values(n, 8000 + s, DType::BF16, -6.0f, 6.0f);
    const Tensor dg = ladder::to_device(g, shape, DType::BF16);
    const Tensor du = ladder::to_device(u, shape, DType::BF16);
    const std::vector<double> ref = gelu_mul_reference(g, u);
    GuardedOutput out(shape);
    for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
      SCOPED_TRACE(std::string("gelu_mul variant ") + v.name + ", shape " + ladder::shape_str(shape));
      out.poison();
      v.launch(dg.ptr<bf16>(), du.ptr<bf16>(), out.view.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const ladder::CompareResult r =
          ladder::compare(ladder::to_host(out.view), ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.mismatches << " of " << n << " values differ\n" << r.report;
      EXPECT_TRUE(out.guard_untouched()) << "wrote past the end of the output";
    }
  }
}

// The promise of the chapter: the fused kernel prints exactly what eager gelu then mul print. Checked against the
// eager chapter's plain kernels, for every fused variant, bit for bit.
TEST(FusedKernels, BitIdenticalToEagerGeluThenMul) {
  SKIP_WITHOUT_GPU();
  const ch03::GeluVariant eager_gelu = ch03::find_gelu_variant("plain");  // a copy: small, and no dangling
  const ch03::MulVariant eager_mul = ch03::find_mul_variant("plain");
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const Tensor g =
        ladder::to_device(ladder::random_values(n, 9000 + s, DType::BF16, -6.0f, 6.0f), shape, DType::BF16);
    const Tensor u =
        ladder::to_device(ladder::random_values(n, 9500 + s, DType::BF16, -6.0f, 6.0f), shape, DType::BF16);
    const Tensor h = ladder::empty(shape, DType::BF16), eager = ladder::empty(shape, DType::BF16);
    eager_gelu.launch(g.ptr<bf16>(), h.ptr<bf16>(), n, 0);
    eager_mul.launch(h.ptr<bf16>(), u.ptr<bf16>(), eager.ptr<bf16>(), n, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> eager_bits = bits_of(eager.data, n);
    GuardedOutput out(shape);
    for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
      SCOPED_TRACE(std::string("gelu_mul variant ") + v.name + ", shape " + ladder::shape_str(shape));
      out.poison();
      v.launch(g.ptr<bf16>(), u.ptr<bf16>(), out.view.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<uint16_t> bits = bits_of(out.view.data, n);
      int64_t differ = 0, first = -1;
      for (int64_t i = 0; i < n; ++i) {
        if (bits[i] != eager_bits[i] && differ++ == 0) first = i;
      }
      EXPECT_EQ(differ, 0) << "first difference at index " << first << ": eager 0x" << std::hex << eager_bits[first]
                           << ", fused 0x" << bits[first];
    }
  }
}

// A view that starts at element 1 of its buffer is 2 bytes past a 16-byte boundary: a 16-byte load from it would
// fault. The vectorized launchers must notice and still give the right answer (they fall back to the plain kernel).
TEST(FusedKernels, MisalignedPointersStillWork) {
  SKIP_WITHOUT_GPU();
  for (int64_t n : {int64_t{1}, int64_t{9}, int64_t{1000003}}) {
    const std::vector<float> xg = ladder::random_values(n + 2, 10000 + n, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> xu = ladder::random_values(n + 2, 11000 + n, DType::BF16, -6.0f, 6.0f);
    const Tensor buf_g = ladder::to_device(xg, {n + 2}, DType::BF16);
    const Tensor buf_u = ladder::to_device(xu, {n + 2}, DType::BF16);
    const Tensor buf_out = ladder::empty({n + 2}, DType::BF16);
    const Tensor g = ladder::view_of(buf_g.ptr<bf16>() + 1, DType::BF16, {n});
    const Tensor u = ladder::view_of(buf_u.ptr<bf16>() + 1, DType::BF16, {n});
    const Tensor out = ladder::view_of(buf_out.ptr<bf16>() + 1, DType::BF16, {n});
    const std::vector<double> ref = gelu_mul_reference({xg.begin() + 1, xg.end() - 1}, {xu.begin() + 1, xu.end() - 1});
    for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
      SCOPED_TRACE(std::string("gelu_mul variant ") + v.name + ", n " + std::to_string(n) + ", misaligned");
      ladder::poison(buf_out);
      v.launch(g.ptr<bf16>(), u.ptr<bf16>(), out.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto r = ladder::compare(ladder::to_host(out), ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.report;
      const std::vector<uint16_t> all = bits_of(buf_out.data, n + 2);
      EXPECT_TRUE(all.front() == kPoisonBits && all.back() == kPoisonBits) << "wrote outside the output view";
    }
  }
}

// The op the chapter calls: it launches the named variant and refuses what the kernels cannot handle.
TEST(FusedOps, RunTheNamedVariant) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 4099;
  const Shape shape = {n};
  const std::vector<float> x = ladder::random_values(n, 12000, DType::BF16, -6.0f, 6.0f);
  const std::vector<float> y = ladder::random_values(n, 12001, DType::BF16, -6.0f, 6.0f);
  const Tensor g = ladder::to_device(x, shape, DType::BF16), u = ladder::to_device(y, shape, DType::BF16);
  const Tensor out = ladder::empty(shape, DType::BF16);
  const std::vector<double> ref = gelu_mul_reference(x, y);
  for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
    SCOPED_TRACE(std::string("variant ") + v.name);
    ladder::poison(out);
    ch03::gelu_mul(g, u, out, v.name);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(ladder::compare(ladder::to_host(out), ref, ladder::tolerance_for(DType::BF16)).ok);
  }
  ladder::poison(out);
  ch03::gelu_mul(g, u, out);  // the default variant
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(ladder::compare(ladder::to_host(out), ref, ladder::tolerance_for(DType::BF16)).ok);
}

TEST(FusedOps, RefuseWhatTheKernelsCannotHandle) {
  SKIP_WITHOUT_GPU();
  const Tensor g = ladder::empty({64, 32}, DType::BF16), u = ladder::empty({64, 32}, DType::BF16);
  const Tensor out = ladder::empty({64, 32}, DType::BF16);
  const Tensor f32 = ladder::empty({64, 32}, DType::F32), small = ladder::empty({64, 31}, DType::BF16);
  EXPECT_THROW(ch03::gelu_mul(f32, u, out), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(g, f32, out), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(g, u, f32), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(g, small, out), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(g, u, small), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(g.t(), u.t(), out.t()), ladder::Error);  // transposed views are not contiguous
  try {
    ch03::gelu_mul(g, u, out, "fastest");
    FAIL() << "an unknown variant name was accepted";
  } catch (const ladder::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fastest"), std::string::npos) << what;
    for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants())
      EXPECT_NE(what.find(v.name), std::string::npos) << "the message should list '" << v.name << "': " << what;
  }
}

// n = 0 launches nothing (a grid of zero blocks would be a launch error) and leaves no error behind.
TEST(FusedKernels, EmptyInputLaunchesNothing) {
  SKIP_WITHOUT_GPU();
  for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
    EXPECT_NO_THROW(v.launch(nullptr, nullptr, nullptr, 0, nullptr)) << v.name;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << v.name;
  }
  const Tensor e = ladder::empty({0, 8}, DType::BF16);
  EXPECT_NO_THROW(ch03::gelu_mul(e, e, e));
}

// An output shifted into an input is refused (in place is fine: gpu_in_place_test.cpp).
TEST(FusedOps, PartialOverlapIsRefused) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 4096;
  const Tensor buf = ladder::empty({n + 1}, DType::BF16), u = ladder::empty({n}, DType::BF16);
  const Tensor g = ladder::view_of(buf.data, DType::BF16, {n});
  const Tensor shifted = ladder::view_of(static_cast<bf16*>(buf.data) + 1, DType::BF16, {n});
  EXPECT_THROW(ch03::gelu_mul(g, u, shifted), ladder::Error);
  EXPECT_THROW(ch03::gelu_mul(u, g, shifted), ladder::Error);
  EXPECT_NO_THROW(ch03::gelu_mul(g, u, g));  // in place
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
