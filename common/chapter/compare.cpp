#include "chapter/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace ladder {

Tolerance tolerance_for(DType dtype, int64_t reduction_length) {
  if (dtype == DType::BF16) return {1e-2, 1.6e-2};
  // float32 accumulation error grows about like sqrt(K) for random signs.
  const double scale = std::sqrt(static_cast<double>(std::max<int64_t>(reduction_length, 1)));
  return {1e-5 * scale, 1e-4};  // compare.h says why these
}

CompareResult compare(const std::vector<float>& got, const std::vector<double>& ref, Tolerance tol, int max_rows,
                      const std::function<std::string(int64_t i)>& where) {
  CompareResult r;
  if (got.size() != ref.size()) {
    r.ok = false;
    r.mismatches = static_cast<int64_t>(std::max(got.size(), ref.size()));
    r.report = fmt::format("  size mismatch: got {} values, reference has {}\n", got.size(), ref.size());
    return r;
  }
  r.checked = static_cast<int64_t>(got.size());
  std::string rows;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], e = ref[i];
    // Written so that NaN fails: !(x <= bound) is true for NaN, where (x > bound) would be false.
    const bool finite = std::isfinite(g);
    const double err = std::fabs(g - e);
    const bool ok = finite && err <= tol.atol + tol.rtol * std::fabs(e);
    if (finite) r.max_abs_err = std::max(r.max_abs_err, err);
    if (!ok) {
      if (r.mismatches < max_rows) {
        const int64_t at = static_cast<int64_t>(i);
        rows += fmt::format("  {:>20}  ref {:>14.7g}  got {:>14.7g}\n", where ? where(at) : fmt::format("index {}", at),
                            e, g);
      }
      ++r.mismatches;
    }
  }
  r.ok = r.mismatches == 0;
  if (r.ok) {
    r.report = fmt::format("all {} values within atol {:g} + rtol {:g} * |ref| (max abs error {:.3g})", r.checked,
                           tol.atol, tol.rtol, r.max_abs_err);
  } else {
    r.report = rows;
  }
  return r;
}

CompareResult compare_rows(const std::vector<float>& got, int64_t M, int64_t N,
                           const std::function<void(int64_t, double*)>& ref_row, Tolerance tol, int64_t max_rows) {
  if (static_cast<int64_t>(got.size()) != M * N) return compare(got, std::vector<double>(size_t(M * N)), tol);
  std::vector<int64_t> rows;
  if (M <= max_rows) {
    for (int64_t m = 0; m < M; ++m) rows.push_back(m);
  } else {
    for (int64_t i = 0; i < max_rows; ++i) rows.push_back(i * (M - 1) / (max_rows - 1));
  }
  std::vector<float> got_rows;
  std::vector<double> ref_rows(rows.size() * N);
  for (size_t i = 0; i < rows.size(); ++i) {
    got_rows.insert(got_rows.end(), got.begin() + rows[i] * N, got.begin() + (rows[i] + 1) * N);
    ref_row(rows[i], &ref_rows[i * N]);
  }
  CompareResult r = compare(got_rows, ref_rows, tol);
  int64_t nonfinite = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++nonfinite;
    }
  }
  if (nonfinite > 0) {
    r.ok = false;
    r.mismatches += nonfinite;
    r.report += fmt::format("  {} values in the whole output are NaN or Inf (first at index {}: {})\n", nonfinite,
                            first, got[first]);
  }
  if (r.ok && M > max_rows) r.report += fmt::format(" ({} of {} rows checked, all finite)", rows.size(), M);
  r.checked = static_cast<int64_t>(got.size());
  return r;
}

namespace {
// n of the indices 0..size-1, evenly spaced, first and last included (all of them when n >= size).
std::vector<int64_t> spaced(int64_t size, int64_t n) {
  std::vector<int64_t> v;
  if (n >= size) {
    for (int64_t i = 0; i < size; ++i) v.push_back(i);
  } else if (n == 1) {
    v.push_back(0);
  } else {
    for (int64_t i = 0; i < n; ++i) v.push_back(i * (size - 1) / (n - 1));
  }
  return v;
}
}  // namespace

OutputSample sample_output(int64_t M, int64_t N, double row_cost, double elem_cost, double budget) {
  if (double(M) * (row_cost + double(N) * elem_cost) <= budget) return {spaced(M, M), spaced(N, N)};
  int64_t rows = std::min<int64_t>(M, 64);
  while (rows > 1 && rows * row_cost > budget / 2) rows /= 2;
  int64_t cols = N;
  if (elem_cost > 0) {
    const double left = std::max(budget - rows * row_cost, 0.0) / (rows * elem_cost);
    cols = std::clamp<int64_t>(static_cast<int64_t>(std::min(left, double(N))), 1, N);
  }
  return {spaced(M, rows), spaced(N, cols)};
}

void require_match(const CompareResult& r, const std::string& what) {
  if (r.ok) return;
  throw Error(fmt::format("{}: {} of {} values differ from the CPU reference (NaN, Inf and unwritten values count)\n{}",
                          what, r.mismatches, r.checked, r.report));
}

}  // namespace ladder
