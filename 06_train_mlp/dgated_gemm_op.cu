// The host side of the epilogue mode's two GEMMs (geglu_gemm_keep.cu, dgated_gemm.cu): their rules and the ops. Built
// for every architecture; the kernels only for sm_90a.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

#include "06_train_mlp/dgated_gemm.h"
#include "06_train_mlp/kernels.cuh"  // views_disjoint
#include "base/error.h"
#include "cuda/check.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "hopper/launch.h"

#ifndef LADDER_HAVE_SM90A
#define LADDER_HAVE_SM90A 0
#endif

namespace ch06 {
namespace {

using bf16 = __nv_bfloat16;

void require(bool ok, const std::string& what) {
  if (!ok) throw ladder::Error("dgated_gemm: " + what);
}

}  // namespace

std::string dgated_gemm_cannot_run(int major, int minor, int64_t dim, int64_t hidden) {
  if (!LADDER_HAVE_SM90A) return "this build has no sm_90a code (configure with CMAKE_CUDA_ARCHITECTURES including 90)";
  if (major != 9 || minor != 0)
    return fmt::format("its kernel (wgmma, TMA) needs a Hopper GPU (compute capability 9.0), this GPU is {}.{}", major,
                       minor);
  return dgated_gemm_shape_rule(dim, hidden);
}

std::string dgated_gemm_shape_rule(int64_t dim, int64_t hidden) {
  if (dim % 8 != 0 || hidden % 8 != 0)
    return fmt::format("dim = {} and hidden = {} must be multiples of 8 (TMA copies rows of 16-byte multiples)", dim,
                       hidden);
  return "";
}

void geglu_gemm_keep(const ladder::Tensor& x, const ladder::Tensor& w_gate, const ladder::Tensor& w_up,
                     const ladder::Tensor& h, const ladder::Tensor& g, const ladder::Tensor& u) {
  ladder::OpRange range("ladder::geglu_gemm", {&x, &w_gate, &w_up});
  if (x.dim() < 1 || w_gate.dim() != 2) throw ladder::Error("geglu_gemm_keep: x needs a last dimension, w_gate 2");
  const int64_t dim = x.size(-1), hidden = w_gate.size(0), rows = x.numel() / std::max<int64_t>(dim, 1);
  if (w_gate.size(1) != dim || w_up.shape != w_gate.shape)
    throw ladder::Error("geglu_gemm_keep: w_gate and w_up must both be [hidden, dim]");
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm_keep", "x", x, rows * dim);
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm_keep", "w_gate", w_gate, hidden * dim);
  ladder::require_flat(ladder::DType::BF16, "geglu_gemm_keep", "w_up", w_up, hidden * dim);
  for (const auto& [t, name] : {std::pair{&h, "h"}, {&g, "g"}, {&u, "u"}})
    ladder::require_flat(ladder::DType::BF16, "geglu_gemm_keep", name, *t, rows * hidden);
  const hopper::DeviceInfo& gpu = hopper::current_device();
  const std::string why = dgated_gemm_cannot_run(gpu.major, gpu.minor, dim, hidden);
  if (!why.empty()) throw ladder::Error("geglu_gemm_keep: " + why);
#if LADDER_HAVE_SM90A
  launch_geglu_gemm_keep(x.ptr<bf16>(), w_gate.ptr<bf16>(), w_up.ptr<bf16>(), h.ptr<bf16>(), g.ptr<bf16>(),
                         u.ptr<bf16>(), rows, dim, hidden, ladder::current_stream());
#endif
}

void dgated_gemm(const ladder::Tensor& dy, const ladder::Tensor& w_down, const ladder::Tensor& g,
                 const ladder::Tensor& u, const ladder::Tensor& dg, const ladder::Tensor& du, const ladder::Tensor& h) {
  ladder::OpRange range("ladder::dgated_gemm", {&dy, &w_down, &g, &u});
  const int64_t dim = w_down.dim() == 2 ? w_down.size(0) : -1, hidden = w_down.dim() == 2 ? w_down.size(1) : -1;
  require(dim > 0 && dy.dim() >= 1 && dy.size(-1) == dim, "dy must be [..., dim > 0] and W_down [dim, hidden]");
  const int64_t M = dy.numel() / std::max<int64_t>(dim, 1);
  ladder::require_flat(ladder::DType::BF16, "dgated_gemm", "dy", dy, M * dim);
  ladder::require_flat(ladder::DType::BF16, "dgated_gemm", "W_down", w_down, dim * hidden);
  ladder::require_flat(ladder::DType::BF16, "dgated_gemm", "h", h, M * hidden);
  for (const ladder::Tensor* t : {&g, &u, &dg, &du})
    require(t->dtype == ladder::DType::BF16 && t->dim() == 2 && t->size(0) == M && t->size(1) == hidden &&
                t->stride(1) == 1 && t->stride(0) >= hidden && t->stride(0) % 8 == 0,
            "g, u, dg and du must be bf16 [M, hidden] views with unit column stride and a row stride that is a multiple "
            "of 8");
  require(g.stride(0) == u.stride(0) && dg.stride(0) == du.stride(0),
          "g and u must have one row stride, and dg and du one row stride");
  require(M < INT_MAX && dim < INT_MAX && hidden < INT_MAX, "sizes must be < 2^31 (TMA's coordinates are 32-bit)");
  require((M + 127) / 128 * ((hidden + 127) / 128) < INT_MAX,
          "M / 128 x hidden / 128 tiles must be < 2^31 (the kernel numbers them with 32-bit integers)");
  // The kernel reads its inputs while it writes: no output may share an element with an input or another output.
  const std::pair<const ladder::Tensor*, const char*> args[] = {{&dy, "dy"}, {&w_down, "W_down"}, {&g, "g"}, {&u, "u"},
                                                                {&dg, "dg"}, {&du, "du"},         {&h, "h"}};
  for (int out = 4; out < 7; ++out)
    for (int in = 0; in < out; ++in)
      require(views_disjoint(*args[out].first, *args[in].first),
              fmt::format("{} overlaps {}: an output must share no element with an input or another output",
                          args[out].second, args[in].second));
  // TMA's rule for the kernel's tensor maps
  for (const ladder::Tensor* t : {&dy, &w_down, &g, &u, &dg, &du, &h})
    require(reinterpret_cast<uintptr_t>(t->data) % 16 == 0, "every tensor must start at a 16-byte aligned address");
  const hopper::DeviceInfo& gpu = hopper::current_device();  // asked once per device
  const std::string why = dgated_gemm_cannot_run(gpu.major, gpu.minor, dim, hidden);
  require(why.empty(), why);
#if LADDER_HAVE_SM90A
  launch_dgated_gemm(dy.ptr<bf16>(), w_down.ptr<bf16>(), g.ptr<bf16>(), u.ptr<bf16>(), g.stride(0), dg.ptr<bf16>(),
                     du.ptr<bf16>(), dg.stride(0), h.ptr<bf16>(), M, dim, hidden, ladder::current_stream());
#endif
}

}  // namespace ch06
