// See work.h.
#include "trace/analyses/work.h"

#include <algorithm>
#include <map>

namespace ladder {

namespace {

bool finite(double x) { return x >= 0 && x < 1e300; }
double d(int64_t v) { return static_cast<double>(v); }

// Bytes of input i of `op`; 0 for inputs that are not tensors of a known dtype (torch writes "Scalar" or "").
double in_bytes(const Event& op, size_t i) {
  return i < op.input_dims().size() && i < op.input_types().size()
             ? numel(op.input_dims()[i]) * d(dtype_bytes(op.input_types()[i]))
             : 0.0;
}
double elem(const Event& op, size_t i) {
  return i < op.input_types().size() ? d(dtype_bytes(op.input_types()[i])) : 0.0;
}

bool mm(const Event& op, Work* w) {
  const auto& dims = op.input_dims();
  if (dims.size() != 2 || dims[0].size() != 2 || dims[1].size() != 2 || dims[0][1] != dims[1][0]) return false;
  return gemm_work(d(dims[0][0]), d(dims[1][1]), d(dims[0][1]), in_bytes(op, 0) + in_bytes(op, 1), elem(op, 0), w);
}

bool addmm(const Event& op, Work* w) {  // addmm(bias, a, b)
  const auto& dims = op.input_dims();
  if (dims.size() < 3 || dims[1].size() != 2 || dims[2].size() != 2 || dims[1][1] != dims[2][0]) return false;
  return gemm_work(d(dims[1][0]), d(dims[2][1]), d(dims[1][1]), in_bytes(op, 0) + in_bytes(op, 1) + in_bytes(op, 2),
                   elem(op, 1), w);
}

bool matmul(const Event& op, Work* w) {
  // A [..., M, K] folds its leading dimensions into the rows, as matmul does before calling mm.
  const auto& dims = op.input_dims();
  if (dims.size() != 2 || dims[0].size() < 2 || dims[1].size() != 2) return false;
  const int64_t k = dims[0].back();
  if (k != dims[1][0] || k <= 0) return false;  // k = 0 would divide by zero below
  return gemm_work(numel(dims[0]) / d(k), d(dims[1][1]), d(k), in_bytes(op, 0) + in_bytes(op, 1), elem(op, 0), w);
}

bool linear(const Event& op, Work* w) {
  // y = x @ W^T (+ b), W stored [out, in] like nn.Linear.
  const auto& dims = op.input_dims();
  if (dims.size() < 2 || dims[0].empty() || dims[1].size() != 2) return false;
  const int64_t k = dims[0].back();
  if (k != dims[1][1] || k <= 0) return false;
  double read = in_bytes(op, 0) + in_bytes(op, 1);
  if (dims.size() >= 3) read += in_bytes(op, 2);
  return gemm_work(numel(dims[0]) / d(k), d(dims[1][0]), d(k), read, elem(op, 0), w);
}

// PyTorch's ops, under their names without "aten::", and the ones registered, under the names they were given.
std::map<std::string, OpWorkFn, std::less<>>& formulas() {
  static std::map<std::string, OpWorkFn, std::less<>> f = {
      {"mm", mm},
      {"addmm", addmm},
      {"matmul", matmul},
      {"linear", linear},
      {"add", elementwise_work},
      {"mul", elementwise_work},
      {"gelu", elementwise_work},
      {"gelu_backward", elementwise_work},  // the gradient and g read, one tensor written
      {"add_", elementwise_work},           // the in-place add of a backward's gradient sums
  };
  return f;
}

}  // namespace

int64_t dtype_bytes(const std::string& t) {
  static const std::map<std::string, int64_t> kSizes = {
      {"float", 4},
      {"c10::BFloat16", 2},
      {"c10::Half", 2},
      {"double", 8},
      {"int", 4},
      {"long int", 8},
      {"short int", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::complex<float>", 8},
  };
  auto it = kSizes.find(t);
  return it == kSizes.end() ? 0 : it->second;
}

double numel(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t x : dims) n *= d(x);
  return n;
}

bool gemm_work(double m, double n, double k, double read_bytes, double out_elem_bytes, Work* work) {
  if (!(m > 0 && n > 0 && k > 0) || out_elem_bytes == 0 || !finite(read_bytes)) return false;
  work->flops = 2.0 * m * n * k;
  work->bytes = read_bytes + m * n * out_elem_bytes;
  return finite(work->flops) && finite(work->bytes);
}

bool elementwise_work(const Event& op, Work* work) {
  const auto& dims = op.input_dims();
  if (dims.empty() || op.input_types().size() < dims.size() || elem(op, 0) == 0) return false;
  double read = 0, out_numel = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (numel(dims[i]) < 0) return false;
    read += in_bytes(op, i);
    if (dtype_bytes(op.input_types()[i]) > 0) out_numel = std::max(out_numel, numel(dims[i]));
  }
  work->flops = 0;
  work->bytes = read + out_numel * elem(op, 0);
  return finite(work->bytes);
}

void register_op_work(std::string name, OpWorkFn fn) { formulas()[std::move(name)] = fn; }

bool op_work(const Event& op, Work* work) {
  // Shapes and dtypes must both be there, one dtype per input at least (torch writes them side by side).
  if (op.input_dims().empty() || op.input_types().size() < op.input_dims().size()) return false;
  const auto& f = formulas();
  auto it = f.find(op.name);
  if (it == f.end() && op.name.rfind("aten::", 0) == 0) it = f.find(std::string_view(op.name).substr(6));
  return it != f.end() && it->second(op, work);
}

}  // namespace ladder
