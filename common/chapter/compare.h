// Checking a GPU result against a CPU reference, the way a careful reader would: |got - ref| <= atol + rtol * |ref|
// per element, where NaN or Inf in `got` always fails (a plain `fabs(ref - got) > tol` lets NaN through, since every
// comparison with NaN is false), and so does an element the kernel never wrote (outputs are poisoned with NaN first).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu/tensor.h"

namespace ladder {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
// Per dtype, for an output that sums K products (K = 1 for an elementwise op):
//  - float32: atol 1e-5 * sqrt(K), rtol 1e-4. The K roundings of a float32 sum have random signs and add up about
//    like sqrt(K) of them (01_matmul_add at size 4096: atol 6.4e-4, largest error on an H100 1.96e-4).
//  - bf16: atol 1e-2, rtol 1.6e-2, whatever K: the output is rounded once to 8 bits of mantissa (2^-8 = 0.4%
//    relative), far coarser than the float32 accumulation inside.
Tolerance tolerance_for(DType dtype, int64_t reduction_length = 1);

struct CompareResult {
  bool ok = true;
  int64_t checked = 0;
  int64_t mismatches = 0;  // includes NaN/Inf
  double max_abs_err = 0;  // over finite elements
  std::string report;      // the first few mismatches, one "<where> ref <value> got <value>" row each, or
                           // "all N values within ..."
};

// `got` and `ref` must have the same length (else every element counts as a mismatch). The report names element i of
// a mismatch as `where(i)` ("[row, column]", say), or "index i" without it.
CompareResult compare(const std::vector<float>& got, const std::vector<double>& ref, Tolerance tol, int max_rows = 5,
                      const std::function<std::string(int64_t i)>& where = {});

// For outputs too large to recompute on the CPU: `got` is [M, N] row-major; `ref_row(m, out)` writes the reference for
// row m into out[0..N). All rows are checked when M <= max_rows, else max_rows of them (first, last, and evenly
// spaced between). Every element of `got` must be finite either way, so an unwritten one still fails.
CompareResult compare_rows(const std::vector<float>& got, int64_t M, int64_t N,
                           const std::function<void(int64_t, double*)>& ref_row, Tolerance tol, int64_t max_rows = 64);

// Which elements of an [M, N] output a check recomputes on the CPU, when making the reference of a row costs `row_cost`
// multiply-adds and each element of it `elem_cost` more: every element while that stays within `budget` (about 1e8:
// well under a second), else up to 64 rows and as many columns as the budget allows (at least one of each), evenly
// spaced with the first and last included. Rows of a GEMM are independent, and so are its columns, so a sample of both
// checks every kernel tile the sample touches without recomputing a 100000 x 100000 output.
struct OutputSample {
  std::vector<int64_t> rows, cols;
  int64_t size() const { return static_cast<int64_t>(rows.size() * cols.size()); }
};
OutputSample sample_output(int64_t M, int64_t N, double row_cost, double elem_cost, double budget = 1e8);

// Throws ladder::Error ("<what>: 12 of 65536 values differ from the CPU reference" + the report) when !r.ok.
void require_match(const CompareResult& r, const std::string& what);

}  // namespace ladder
