// What comes before a benchmark times an op. A GPU lowers its clock under sustained load (an H200 did under chapter
// 06's kernels, bench/results/2026-11-29_h200_bench_rest_or_load), so an op timed right after a long one is timed at a
// lower clock than the same op timed first. Each benchmark therefore lets the GPU idle --rest-ms before every op it
// times; --load-ms instead runs the op back to back that long first, to time it at the clock a long run holds.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "cuda/check.h"
#include "gpu/stream.h"

namespace benchmarks {

// The check of a time option: a number of ms from 0 to 60000, else "--rest-ms: must be a number from 0 to 60000 (ms),
// got nan". CLI11's Range lets "nan" through, since every comparison with NaN is false.
inline CLI::Validator ms_range() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || v > 60000)
          return "must be a number from 0 to 60000 (ms), got " + s;
        return "";
      },
      "[0..60000]");
}

struct Rest {
  double rest_ms = 300;  // the GPU idles this long before each op is timed
  double load_ms = 0;    // then the op runs back to back this long (no L2 flush in between)

  void add_options(CLI::App& app) {
    app.add_option("--rest-ms", rest_ms, "the GPU idles this long before each op is timed (default 300)")
        ->check(ms_range());
    app.add_option("--load-ms", load_ms,
                   "each op then runs back to back this long first: its time under sustained load (default 0)")
        ->check(ms_range());
  }

  // Waits for the GPU, then idles rest_ms.
  void rest() const {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(rest_ms));
  }

  // Call right before timing `f`: rest(), then f back to back for load_ms (waiting for the GPU every 8 runs).
  void before(const std::function<void()>& f) const {
    rest();
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < load_ms) {
      for (int i = 0; i < 8; ++i) f();
      CUDA_CHECK(cudaStreamSynchronize(ladder::current_stream()));
    }
  }

  // The words a benchmark's header prints.
  std::string words() const {
    return fmt::format("after {} ms of rest, {} ms of the op back to back", rest_ms, load_ms);
  }
};

}  // namespace benchmarks
