// What comes before a benchmark times an op. A GPU lowers its clock under sustained load (an H200 did under chapter
// 06's kernels, bench/results/2026-11-29_h200_bench_rest_or_load), so an op timed right after a long one is timed at a
// lower clock than the same op timed first. Each benchmark therefore lets the GPU idle --rest-ms before every op it
// times; --load-ms instead runs the op back to back that long first, to time it at the clock a long run holds.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "cuda/check.h"
#include "gpu/stream.h"

namespace benchmarks {

struct Rest {
  double rest_ms = 300;  // the GPU idles this long before each op is timed
  double load_ms = 0;    // then the op runs back to back this long (no L2 flush in between)

  void add_options(CLI::App& app) {
    app.add_option("--rest-ms", rest_ms, "the GPU idles this long before each op is timed (default 300)")
        ->check(CLI::Range(0.0, 60000.0));
    app.add_option("--load-ms", load_ms,
                   "each op then runs back to back this long first: its time under sustained load (default 0)")
        ->check(CLI::Range(0.0, 60000.0));
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
