// In place: the output may be an input itself (kernels.cuh promises it, and the kernels' pointers carry no
// __restrict__, so it is defined behaviour). For every variant of gelu and mul, an in-place call must give exactly the
// bits of the same call into a separate output, and match the CPU reference; for mul, the output may be either input,
// or both at once (a * a). Without a GPU every test skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "03_simple_mlp/kernels.cuh"
#include "chapter/compare.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/values.h"
#include "gpu/tests/kernel_test_util.h"

namespace {

using ladder::DType;
using ladder::Shape;
using ladder::Tensor;
using namespace ladder::testing;  // SKIP_WITHOUT_GPU, kShapes, numel_of, bits_of (common/gpu/tests/kernel_test_util.h)

// A fresh device copy of `values`: each in-place call overwrites its input, so every call gets its own.
Tensor copy_of(const std::vector<float>& values, const Shape& shape) {
  return ladder::to_device(values, shape, DType::BF16);
}

TEST(EagerInPlace, GeluIntoItsInput) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> x = ladder::random_values(n, 21000 + s, DType::BF16, -6.0f, 6.0f);
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = ladder::ref::gelu_tanh(x[i]);
    const Tensor g = copy_of(x, shape), h = ladder::empty(shape, DType::BF16);
    for (const ch03::GeluVariant& v : ch03::gelu_variants()) {
      SCOPED_TRACE(std::string("gelu variant ") + v.name + ", shape " + ladder::shape_str(shape));
      v.launch(g.ptr<bf16>(), h.ptr<bf16>(), n, 0);
      const Tensor t = copy_of(x, shape);
      v.launch(t.ptr<bf16>(), t.ptr<bf16>(), n, 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_TRUE(bits_of(t.data, n) == bits_of(h.data, n)) << "in place differs from out of place";
      const auto r = ladder::compare(ladder::to_host(t), ref, ladder::tolerance_for(DType::BF16));
      EXPECT_TRUE(r.ok) << r.report;
    }
  }
}

TEST(EagerInPlace, MulIntoEitherInputOrBoth) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> a = ladder::random_values(n, 22000 + s, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> b = ladder::random_values(n, 23000 + s, DType::BF16, -6.0f, 6.0f);
    std::vector<double> ab(n), aa(n);
    for (int64_t i = 0; i < n; ++i) {
      ab[i] = static_cast<double>(a[i]) * b[i];
      aa[i] = static_cast<double>(a[i]) * a[i];
    }
    const Tensor da = copy_of(a, shape), db = copy_of(b, shape);
    const Tensor want_ab = ladder::empty(shape, DType::BF16), want_aa = ladder::empty(shape, DType::BF16);
    for (const ch03::MulVariant& v : ch03::mul_variants()) {
      v.launch(da.ptr<bf16>(), db.ptr<bf16>(), want_ab.ptr<bf16>(), n, 0);
      v.launch(da.ptr<bf16>(), da.ptr<bf16>(), want_aa.ptr<bf16>(), n, 0);
      struct Case {
        const char* what;
        bool out_is_a;  // else the output is b (a * b), or, with `square`, a * a written into a
        bool square;
      };
      for (const Case& c :
           {Case{"out = a", true, false}, Case{"out = b", false, false}, Case{"out = a = b", true, true}}) {
        SCOPED_TRACE(std::string("mul variant ") + v.name + ", " + c.what + ", shape " + ladder::shape_str(shape));
        const Tensor ta = copy_of(a, shape), tb = copy_of(b, shape);
        const Tensor& out = c.out_is_a ? ta : tb;
        v.launch(ta.ptr<bf16>(), c.square ? ta.ptr<bf16>() : tb.ptr<bf16>(), out.ptr<bf16>(), n, 0);
        CUDA_CHECK(cudaDeviceSynchronize());
        const Tensor& want = c.square ? want_aa : want_ab;
        EXPECT_TRUE(bits_of(out.data, n) == bits_of(want.data, n)) << "in place differs from out of place";
        const auto r = ladder::compare(ladder::to_host(out), c.square ? aa : ab, ladder::tolerance_for(DType::BF16));
        EXPECT_TRUE(r.ok) << r.report;
      }
    }
  }
}

}  // namespace
