// See torch_flops.h. The rules are torch 2.11's saveExtraArgs and computeFlops (torch/csrc/profiler/util.cpp): the
// same inputs (a tensor where torch wants one: its "Input type" is a dtype), the same checks, and the same unsigned
// 64-bit arithmetic in the same order, so that a count that wraps or truncates in torch does here too.
#include "trace/analyses/torch_flops.h"

#include <string>
#include <vector>

namespace ladder {

namespace {

using Dims = std::vector<int64_t>;

// Input k, when the op recorded it as a tensor; null otherwise. torch writes a tensor's "Input type" as its dtype
// ("float", "long int", "c10::BFloat16") and anything else by its kind, capitalised ("Scalar", "ScalarList",
// "TensorList", "GenericList", "Int", "None"), or "" when it wrote nothing.
const Dims* tensor(const Event& op, size_t k) {
  const auto& dims = op.input_dims();
  const auto& types = op.input_types();
  if (k >= dims.size() || k >= types.size() || types[k].empty()) return nullptr;
  const char c = types[k].front();
  if (!(c >= 'a' && c <= 'z')) return nullptr;  // "c10::..." starts lower case too
  return &dims[k];
}

// torch's Concrete Inputs of an int list ("[1, 1]") or an int ("1"), as numbers; false when it is neither.
bool concrete_ints(const Event& op, size_t k, std::vector<int64_t>* out) {
  out->clear();
  const auto& c = op.input_concrete();
  if (k >= c.size() || c[k].empty()) return false;
  const std::string& s = c[k];
  size_t at = s.front() == '[' ? 1 : 0;
  const size_t end = s.front() == '[' ? s.size() - 1 : s.size();
  if (s.front() == '[' && s.back() != ']') return false;
  while (at < end) {
    while (at < end && s[at] == ' ') ++at;
    const bool negative = at < end && s[at] == '-';
    if (negative) ++at;
    int64_t v = 0;
    const size_t first = at;
    for (; at < end && s[at] >= '0' && s[at] <= '9'; ++at) {
      if (v > (int64_t{1} << 50)) return false;
      v = v * 10 + (s[at] - '0');
    }
    if (at == first) return false;
    out->push_back(negative ? -v : v);
    while (at < end && s[at] == ' ') ++at;
    if (at < end && s[at++] != ',') return false;
  }
  return s.front() == '[' || out->size() == 1;
}

uint64_t product(const Dims& d) {
  uint64_t p = 1;
  for (int64_t x : d) p *= static_cast<uint64_t>(x);
  return p;
}

uint64_t conv2d_flops(const Event& op) {
  const Dims* in = tensor(op, 0);
  const Dims* w = tensor(op, 1);
  if (op.input_dims().size() < 7 || !in || !w || w->size() != 4) return 0;
  std::vector<int64_t> stride, padding, dilation, groups;
  if (!concrete_ints(op, 3, &stride) || !concrete_ints(op, 4, &padding) || !concrete_ints(op, 5, &dilation) ||
      !concrete_ints(op, 6, &groups) || groups.size() != 1) {
    return 0;
  }
  if (in->size() != 4 || groups[0] == 0 || padding.size() != 2 || dilation.size() != 2) return 0;
  if (stride.size() != 2 || stride[0] * stride[1] == 0) return 0;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const uint64_t minibatch = u((*in)[0]), in_channels = u((*in)[1]), input_h = u((*in)[2]), input_w = u((*in)[3]);
  const uint64_t out_channels = u((*w)[0]), kernel_h = u((*w)[2]), kernel_w = u((*w)[3]);
  const uint64_t output_h =
      (input_h + 2 * u(padding[0]) - u(dilation[0]) * (kernel_h - 1) - 1) / u(stride[0]) + 1;
  const uint64_t output_w =
      (input_w + 2 * u(padding[1]) - u(dilation[1]) * (kernel_w - 1) - 1) / u(stride[1]) + 1;
  return 2 * minibatch * output_h * output_w * kernel_h * kernel_w * in_channels * out_channels / u(groups[0]);
}

// mm, addmm, bmm, baddbmm: mat1's and mat2's sizes multiplied, less mat1's last (and, batched, first) extent, times 2.
uint64_t gemm_flops(const Event& op, size_t first, size_t tensors, bool batched) {
  for (size_t k = 0; k < tensors; ++k) {
    if (!tensor(op, k)) return 0;
  }
  const Dims& mat1 = *tensor(op, first);
  const Dims& mat2 = *tensor(op, first + 1);
  if (mat1.empty() || (batched && mat1.front() == 0) || mat1.back() == 0) return 0;
  uint64_t flops = product(mat1);
  flops /= static_cast<uint64_t>(mat1.back());
  if (batched) flops /= static_cast<uint64_t>(mat1.front());
  for (int64_t d : mat2) flops *= static_cast<uint64_t>(d);
  return flops * 2;
}

}  // namespace

double torch_flops(const Event& op) {
  const std::string& name = op.name;
  uint64_t flops = 0;
  if (name == "aten::conv2d") {
    flops = conv2d_flops(op);
  } else if (name == "aten::mm" || name == "aten::bmm") {
    flops = gemm_flops(op, 0, 2, name == "aten::bmm");
  } else if (name == "aten::addmm" || name == "aten::baddbmm") {
    flops = gemm_flops(op, 1, 3, name == "aten::baddbmm");
  } else if (name == "aten::mul" || name == "aten::add") {
    if (const Dims* mat = tensor(op, 0)) flops = product(*mat);
  }
  return static_cast<double>(flops);
}

}  // namespace ladder
