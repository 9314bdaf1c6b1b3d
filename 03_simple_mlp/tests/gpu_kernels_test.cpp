// GPU tests of the eager chapter's gelu and mul kernels. Every test iterates the variant lists, so a variant you add
// in kernels.cu is tested here with no other change. Without a GPU every test skips.
//
// What is checked, for every variant:
//  - against a float64 CPU reference with bf16 tolerance, on fresh random inputs in [-6, 6] (so gelu's flat tails are
//    exercised), for sizes that are and are not multiples of the 8-element vector (1, 7, 8, 9, 1000003) and the blog's
//    [8192, 3072]; outputs are poisoned with NaN first, so an element a kernel forgot to write fails;
//  - nothing is written past the end of the output;
//  - every variant gives exactly the bits of "plain" (the numbers must not depend on the variant);
//  - pointers that are not 16-byte aligned (a view starting at element 1) still give the right answer;
//  - gelu over every finite bf16 input, mul against the correctly rounded product;
//  - the ops refuse wrong dtypes, strides, sizes and variant names with a clear error.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "03_simple_mlp/kernels.cuh"
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/tests/kernel_test_util.h"
#include "gpu/values.h"

namespace {

using ladder::DType;
using ladder::Shape;
using ladder::Tensor;

using namespace ladder::testing;  // SKIP_WITHOUT_GPU, kShapes, GuardedOutput, ... (common/gpu/tests/kernel_test_util.h)

std::vector<double> gelu_reference(const std::vector<float>& x) {
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = ladder::ref::gelu_tanh(x[i]);
  return ref;
}

std::vector<double> mul_reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> ref(a.size());
  for (size_t i = 0; i < a.size(); ++i) ref[i] = static_cast<double>(a[i]) * b[i];
  return ref;
}

template <class List>
std::set<std::string> names_of(const List& list) {
  std::set<std::string> names;
  for (const auto& v : list) names.insert(v.name);
  return names;
}

// One --kernel option picks a gelu and a mul variant by one name, so both lists carry the same names (in any order);
// "plain" (what the bit-identity checks below compare with) and "vec" (the default of the ops and the chapter) are
// among them.
TEST(EagerKernels, OneNamePicksBothKernels) {
  EXPECT_EQ(names_of(ch03::gelu_variants()), names_of(ch03::mul_variants()));
  for (const char* name : {"plain", "vec"}) {
    EXPECT_NO_THROW(ch03::find_gelu_variant(name)) << name;
    EXPECT_NO_THROW(ch03::find_mul_variant(name)) << name;
  }
}

TEST(EagerKernels, GeluVariantsMatchCpuReference) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> x = ladder::random_values(n, 1000 + s, DType::BF16, -6.0f, 6.0f);
    const Tensor g = ladder::to_device(x, shape, DType::BF16);
    const std::vector<double> ref = gelu_reference(x);
    GuardedOutput h(shape);
    h.poison();
    ch03::find_gelu_variant("plain").launch(g.ptr<bf16>(), h.view.ptr<bf16>(), n, 0);
    const std::vector<uint16_t> plain_bits = bits_of(h.view.data, n);
    for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
      SCOPED_TRACE(std::string("gelu variant ") + v.name + ", shape " + ladder::shape_str(shape));
      h.poison();
      v.launch(g.ptr<bf16>(), h.view.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const ladder::CompareResult r = ladder::compare(ladder::to_host(h.view), ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.mismatches << " of " << n << " values differ\n" << r.report;
      EXPECT_TRUE(h.guard_untouched()) << "wrote past the end of the output";
      const std::vector<uint16_t> bits = bits_of(h.view.data, n);
      EXPECT_TRUE(bits == plain_bits) << "not bit-identical to the plain variant";
    }
  }
}

TEST(EagerKernels, MulVariantsMatchCpuReference) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> a = ladder::random_values(n, 2000 + s, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> b = ladder::random_values(n, 3000 + s, DType::BF16, -6.0f, 6.0f);
    const Tensor da = ladder::to_device(a, shape, DType::BF16);
    const Tensor db = ladder::to_device(b, shape, DType::BF16);
    const std::vector<double> ref = mul_reference(a, b);
    GuardedOutput out(shape);
    out.poison();
    ch03::find_mul_variant("plain").launch(da.ptr<bf16>(), db.ptr<bf16>(), out.view.ptr<bf16>(), n, 0);
    const std::vector<uint16_t> plain_bits = bits_of(out.view.data, n);
    for (const ch03::MulVariant& v : ch03::mul_variants()) {
      SCOPED_TRACE(std::string("mul variant ") + v.name + ", shape " + ladder::shape_str(shape));
      out.poison();
      v.launch(da.ptr<bf16>(), db.ptr<bf16>(), out.view.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const ladder::CompareResult r =
          ladder::compare(ladder::to_host(out.view), ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.mismatches << " of " << n << " values differ\n" << r.report;
      EXPECT_TRUE(out.guard_untouched()) << "wrote past the end of the output";
      const std::vector<uint16_t> bits = bits_of(out.view.data, n);
      EXPECT_TRUE(bits == plain_bits) << "not bit-identical to the plain variant";
      // Stronger than the tolerance: a product of two bf16 values is exact in float, so rounding it once must give
      // the correctly rounded bf16 product, bit for bit.
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) wrong += bits[i] != ladder::float_to_bf16_bits(a[i] * b[i]);
      EXPECT_EQ(wrong, 0) << "products not correctly rounded to bf16";
    }
  }
}

// A view that starts at element 1 of its buffer is 2 bytes past a 16-byte boundary: a 16-byte load from it would
// fault. The vectorized launchers must notice and still give the right answer (they fall back to the plain kernel).
TEST(EagerKernels, MisalignedPointersStillWork) {
  SKIP_WITHOUT_GPU();
  for (int64_t n : {int64_t{1}, int64_t{9}, int64_t{1000003}}) {
    const std::vector<float> xa = ladder::random_values(n + 2, 4000 + n, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> xb = ladder::random_values(n + 2, 5000 + n, DType::BF16, -6.0f, 6.0f);
    const Tensor buf_a = ladder::to_device(xa, {n + 2}, DType::BF16);
    const Tensor buf_b = ladder::to_device(xb, {n + 2}, DType::BF16);
    const Tensor buf_out = ladder::empty({n + 2}, DType::BF16);
    const Tensor a = ladder::view_of(buf_a.ptr<bf16>() + 1, DType::BF16, {n});
    const Tensor b = ladder::view_of(buf_b.ptr<bf16>() + 1, DType::BF16, {n});
    const Tensor out = ladder::view_of(buf_out.ptr<bf16>() + 1, DType::BF16, {n});
    const std::vector<float> va(xa.begin() + 1, xa.end() - 1), vb(xb.begin() + 1, xb.end() - 1);
    const std::vector<double> gelu_ref = gelu_reference(va), mul_ref = mul_reference(va, vb);
    auto neighbours_untouched = [&] {
      const std::vector<uint16_t> all = bits_of(buf_out.data, n + 2);
      return all.front() == kPoisonBits && all.back() == kPoisonBits;
    };
    for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
      SCOPED_TRACE(std::string("gelu variant ") + v.name + ", n " + std::to_string(n) + ", misaligned");
      ladder::poison(buf_out);
      v.launch(a.ptr<bf16>(), out.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto r = ladder::compare(ladder::to_host(out), gelu_ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.report;
      EXPECT_TRUE(neighbours_untouched()) << "wrote outside the output view";
    }
    for (const ch03::MulVariant& v : ch03::mul_variants()) {
      SCOPED_TRACE(std::string("mul variant ") + v.name + ", n " + std::to_string(n) + ", misaligned");
      ladder::poison(buf_out);
      v.launch(a.ptr<bf16>(), b.ptr<bf16>(), out.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto r = ladder::compare(ladder::to_host(out), mul_ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.report;
      EXPECT_TRUE(neighbours_untouched()) << "wrote outside the output view";
    }
  }
}

// The tanh-approximated GELU evaluated without cancellation: 0.5 x (1 + tanh z) = x / (1 + exp(-2z)), in long double.
// (ref::gelu_tanh's 1 + tanh(z) cancels for very negative x, where tanh(z) is within 1e-16 of -1: fine for a bf16
// tolerance, useless for counting bf16 steps on values below ~1e-13.)
double gelu_exact(double x) {
  const long double xl = x;
  const long double z = std::sqrt(2.0L / 3.14159265358979323846264338327950288L) * (xl + 0.044715L * xl * xl * xl);
  return static_cast<double>(xl / (1.0L + std::exp(-2.0L * z)));
}

// bf16 has only 65536 values, so gelu can be checked on every finite one. Beyond the tolerance, the result must be
// within one bf16 step (ulp) of the correctly rounded true value wherever that value is not vanishingly small: the
// float32 formula in common/gpu/gelu.cuh is accurate to a few float ulps, far below bf16's resolution.
TEST(EagerKernels, GeluOnEveryFiniteBf16Value) {
  SKIP_WITHOUT_GPU();
  std::vector<float> x;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = ladder::bf16_bits_to_float(static_cast<uint16_t>(b));
    if (std::isfinite(f)) x.push_back(f);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  const Tensor g = ladder::to_device(x, {n}, DType::BF16);
  const std::vector<double> ref = gelu_reference(x);
  GuardedOutput h({n});
  // bf16 bit patterns as a monotonic integer line, so the distance between two values counts the steps between them.
  auto ordered = [](uint16_t b) { return (b & 0x8000) ? -static_cast<int>(b & 0x7FFF) : static_cast<int>(b); };
  for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
    SCOPED_TRACE(std::string("gelu variant ") + v.name);
    h.poison();
    v.launch(g.ptr<bf16>(), h.view.ptr<bf16>(), n, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto r = ladder::compare(ladder::to_host(h.view), ref, ladder::tolerance_for(DType::BF16));
    EXPECT_TRUE(r.ok) << r.report;
    const std::vector<uint16_t> bits = bits_of(h.view.data, n);
    int64_t off_by_one = 0, worse = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double exact = gelu_exact(x[i]);
      if (std::fabs(exact) < 1e-30) continue;  // near float32's subnormals (x < -9.3): only the tolerance applies
      const int steps = std::abs(ordered(bits[i]) - ordered(ladder::float_to_bf16_bits(static_cast<float>(exact))));
      off_by_one += steps == 1;
      if (steps > 1) {
        if (worse < 5)
          ADD_FAILURE() << "x " << x[i] << ": exact " << exact << ", got " << ladder::bf16_bits_to_float(bits[i])
                        << " (" << steps << " bf16 steps away)";
        ++worse;
      }
    }
    EXPECT_EQ(worse, 0);
    std::printf("  gelu %-16s %lld finite inputs, %lld one bf16 step from the correctly rounded value\n", v.name,
                static_cast<long long>(n), static_cast<long long>(off_by_one));
  }
}

// The ops the chapter calls: they launch the named variant and refuse what the kernels cannot handle.
TEST(EagerOps, RunTheNamedVariant) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 4099;
  const Shape shape = {n};
  const std::vector<float> x = ladder::random_values(n, 6000, DType::BF16, -6.0f, 6.0f);
  const std::vector<float> y = ladder::random_values(n, 6001, DType::BF16, -6.0f, 6.0f);
  const Tensor g = ladder::to_device(x, shape, DType::BF16), u = ladder::to_device(y, shape, DType::BF16);
  const Tensor h = ladder::empty(shape, DType::BF16), out = ladder::empty(shape, DType::BF16);
  for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
    SCOPED_TRACE(std::string("variant ") + v.name);
    ladder::poison(h);
    ladder::poison(out);
    ch03::gelu(g, h, v.name);
    ch03::mul(h, u, out, v.name);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> hv = ladder::to_host(h);
    EXPECT_TRUE(ladder::compare(hv, gelu_reference(x), ladder::tolerance_for(DType::BF16)).ok);
    EXPECT_TRUE(ladder::compare(ladder::to_host(out), mul_reference(hv, y), ladder::tolerance_for(DType::BF16)).ok);
  }
  // The default variant.
  ladder::poison(h);
  ch03::gelu(g, h);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(ladder::compare(ladder::to_host(h), gelu_reference(x), ladder::tolerance_for(DType::BF16)).ok);
}

TEST(EagerOps, RefuseWhatTheKernelsCannotHandle) {
  SKIP_WITHOUT_GPU();
  const Tensor g = ladder::empty({64, 32}, DType::BF16), h = ladder::empty({64, 32}, DType::BF16);
  const Tensor f32 = ladder::empty({64, 32}, DType::F32), small = ladder::empty({64, 31}, DType::BF16);
  EXPECT_THROW(ch03::gelu(f32, h), ladder::Error);
  EXPECT_THROW(ch03::gelu(g, f32), ladder::Error);
  EXPECT_THROW(ch03::gelu(g, small), ladder::Error);
  EXPECT_THROW(ch03::gelu(g.t(), h.t()), ladder::Error);  // a transposed view is not contiguous
  EXPECT_THROW(ch03::mul(g, small, h), ladder::Error);
  EXPECT_THROW(ch03::mul(g, g, f32), ladder::Error);
  try {
    ch03::gelu(g, h, "fastest");
    FAIL() << "an unknown variant name was accepted";
  } catch (const ladder::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fastest"), std::string::npos) << what;
    for (const ch03::GeluVariant& v : ch03::gelu_variants())
      EXPECT_NE(what.find(v.name), std::string::npos) << "the message should list '" << v.name << "': " << what;
  }
  EXPECT_THROW(ch03::find_mul_variant("fastest"), ladder::UsageError);
}

// n = 0 launches nothing (a grid of zero blocks would be a launch error) and leaves no error behind.
TEST(EagerKernels, EmptyInputLaunchesNothing) {
  SKIP_WITHOUT_GPU();
  for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
    EXPECT_NO_THROW(v.launch(nullptr, nullptr, 0, nullptr)) << v.name;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << v.name;
  }
  for (const ch03::MulVariant& v : ch03::mul_variants()) {
    EXPECT_NO_THROW(v.launch(nullptr, nullptr, nullptr, 0, nullptr)) << v.name;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << v.name;
  }
  const Tensor e = ladder::empty({0, 8}, DType::BF16);
  EXPECT_NO_THROW(ch03::gelu(e, e));
  EXPECT_NO_THROW(ch03::mul(e, e, e));
}

// In place is fine (gpu_in_place_test.cpp checks every variant), an output shifted into an input is refused.
TEST(EagerOps, PartialOverlapIsRefusedInPlaceWorks) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 4096;
  const std::vector<float> x = ladder::random_values(n + 1, 6100, DType::BF16, -6.0f, 6.0f);
  const Tensor buf = ladder::to_device(x, {n + 1}, DType::BF16);
  const Tensor a = ladder::view_of(buf.data, DType::BF16, {n});
  const Tensor shifted = ladder::view_of(static_cast<bf16*>(buf.data) + 1, DType::BF16, {n});
  EXPECT_THROW(ch03::gelu(a, shifted), ladder::Error);
  EXPECT_THROW(ch03::mul(a, a, shifted), ladder::Error);
  for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
    const Tensor t = ladder::to_device(x, {n + 1}, DType::BF16);
    const Tensor in_place = ladder::view_of(t.data, DType::BF16, {n});
    ch03::gelu(in_place, in_place, v.name);
    const std::vector<float> got = ladder::to_host(t);
    EXPECT_TRUE(ladder::compare(std::vector<float>(got.begin(), got.begin() + n),
                                gelu_reference(std::vector<float>(x.begin(), x.begin() + n)),
                                ladder::tolerance_for(DType::BF16))
                    .ok)
        << v.name;
  }
}

// Why the chapter poisons every intermediate: a kernel that writes only half of h leaves NaN there, the NaN flows
// through mul and the down GEMM into y, and the chapter's finite check on all of y fails.
TEST(EagerOps, AHalfWrittenIntermediateReachesTheOutput) {
  SKIP_WITHOUT_GPU();
  const int64_t rows = 16, dim = 64, hidden = 256;
  const Tensor g = ladder::random_tensor({rows, hidden}, 1, DType::BF16);
  const Tensor u = ladder::random_tensor({rows, hidden}, 2, DType::BF16);
  const Tensor down = ladder::random_tensor({dim, hidden}, 3, DType::BF16, -0.06f, 0.06f);
  const Tensor h = ladder::empty({rows, hidden}, DType::BF16), m = ladder::empty({rows, hidden}, DType::BF16);
  const Tensor y = ladder::empty({rows, dim}, DType::BF16);
  for (const Tensor* t : {&h, &m, &y}) ladder::poison(*t);
  ch03::find_gelu_variant("plain").launch(g.ptr<bf16>(), h.ptr<bf16>(), rows * hidden / 2, nullptr);  // half of h
  ch03::mul(h, u, m);
  ladder::ops::linear(m, down, nullptr, y);
  EXPECT_EQ(ladder::count_nonfinite(y).count, rows * dim / 2);  // every row of y that read an unwritten h
}

}  // namespace
