// In place: the output may be an input itself (kernels.cuh promises it, and the kernels' pointers carry no
// __restrict__, so it is defined behaviour). For every variant of gelu_mul, writing into g, into u, or into one tensor
// that is both must give exactly the bits of the same call into a separate output, and match the CPU reference.
// Without a GPU every test skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "03_fused_mlp/kernels.cuh"
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

// gelu in float64, rounded to bf16 where eager mode stores h, times u.
std::vector<double> gelu_mul_reference(const std::vector<float>& g, const std::vector<float>& u) {
  std::vector<double> ref(g.size());
  for (size_t i = 0; i < g.size(); ++i)
    ref[i] =
        static_cast<double>(ladder::round_to(DType::BF16, static_cast<float>(ladder::ref::gelu_tanh(g[i])))) * u[i];
  return ref;
}

TEST(FusedInPlace, GeluMulIntoEitherInputOrBoth) {
  SKIP_WITHOUT_GPU();
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s];
    const int64_t n = numel_of(shape);
    const std::vector<float> g = ladder::random_values(n, 24000 + s, DType::BF16, -6.0f, 6.0f);
    const std::vector<float> u = ladder::random_values(n, 25000 + s, DType::BF16, -6.0f, 6.0f);
    const std::vector<double> gu = gelu_mul_reference(g, u), gg = gelu_mul_reference(g, g);
    const Tensor dg = ladder::to_device(g, shape, DType::BF16), du = ladder::to_device(u, shape, DType::BF16);
    const Tensor want_gu = ladder::empty(shape, DType::BF16), want_gg = ladder::empty(shape, DType::BF16);
    for (const ch03::GeluMulVariant& v : ch03::gelu_mul_variants()) {
      v.launch(dg.ptr<bf16>(), du.ptr<bf16>(), want_gu.ptr<bf16>(), n, 0);
      v.launch(dg.ptr<bf16>(), dg.ptr<bf16>(), want_gg.ptr<bf16>(), n, 0);
      struct Case {
        const char* what;
        bool out_is_g;  // else the output is u (gelu(g) * u), or, with `same`, gelu(g) * g written into g
        bool same;
      };
      for (const Case& c :
           {Case{"out = g", true, false}, Case{"out = u", false, false}, Case{"out = g = u", true, true}}) {
        SCOPED_TRACE(std::string("gelu_mul variant ") + v.name + ", " + c.what + ", shape " + ladder::shape_str(shape));
        const Tensor tg = ladder::to_device(g, shape, DType::BF16), tu = ladder::to_device(u, shape, DType::BF16);
        const Tensor& out = c.out_is_g ? tg : tu;
        v.launch(tg.ptr<bf16>(), c.same ? tg.ptr<bf16>() : tu.ptr<bf16>(), out.ptr<bf16>(), n, 0);
        CUDA_CHECK(cudaDeviceSynchronize());
        const Tensor& want = c.same ? want_gg : want_gu;
        EXPECT_TRUE(bits_of(out.data, n) == bits_of(want.data, n)) << "in place differs from out of place";
        const auto r = ladder::compare(ladder::to_host(out), c.same ? gg : gu, ladder::tolerance_for(DType::BF16));
        EXPECT_TRUE(r.ok) << r.report;
      }
    }
  }
}

// The op the chapter calls accepts in place too (and refuses a partial overlap: gpu_kernels_test.cu).
TEST(FusedInPlace, TheOpRunsInPlace) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 4099;
  const std::vector<float> g = ladder::random_values(n, 26000, DType::BF16, -6.0f, 6.0f);
  const std::vector<float> u = ladder::random_values(n, 26001, DType::BF16, -6.0f, 6.0f);
  const Tensor dg = ladder::to_device(g, {n}, DType::BF16), du = ladder::to_device(u, {n}, DType::BF16);
  ch03::gelu_mul(dg, du, dg);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto r = ladder::compare(ladder::to_host(dg), gelu_mul_reference(g, u), ladder::tolerance_for(DType::BF16));
  EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
