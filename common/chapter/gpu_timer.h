// How the ladder times GPU work, the one way behind every "GPU time" it prints: each chapter's "GPU time per forward"
// and the ceilings its kernel table compares with (chapter.cpp), and every row of bench_elementwise and
// bench_epilogue_mlp. (bench/torch_vs_ladder.py times PyTorch's kernels the same way, in Python.)
//
// The method, per call of time(fn, runs):
//  1. Warm-up: kWarmupRuns runs, each after an L2 flush as below, untimed but for their total, which caps the count of
//     timed runs (fewer, at least 3, when `runs` of them would take more than `budget_s`).
//  2. Each timed run: one kernel reads a buffer of kFlushTimesL2 x the L2's size (chapter/l2_flush.h), so the run's
//     inputs come from HBM, not from what the previous run left in the cache, and the L2 holds no dirty line for the
//     run to write back; then a CUDA event, fn(), a CUDA event. Only fn() lies between the events. All runs are
//     queued without waiting in between and read after one synchronize: the host stays ahead of the GPU (issuing a
//     run takes it less time than the GPU spends flushing and running it), so each run's work is already queued when
//     its start event is reached, and the events time the GPU, not the launches.
//  3. The statistic: the median of the per-run times (the mean of the middle two for an even count), and the minimum.
// fn must launch its work on current_stream(), where the events and the flush go, and must not synchronize.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpu/tensor.h"

namespace ladder {

struct GpuTiming {
  std::vector<double> us;  // every timed run, in microseconds, ascending

  int runs() const { return static_cast<int>(us.size()); }
  double median_us() const;
  double min_us() const { return us.empty() ? 0 : us.front(); }
};
// The median of ascending values: the middle one, or the mean of the middle two (0 for none).
double median_of_sorted(const std::vector<double>& sorted);

class GpuTimer {
 public:
  static constexpr int kFlushTimesL2 = 2;  // the flush buffer, in L2 sizes: twice, so no line of a run survives it
  static constexpr int kWarmupRuns = 5;
  static constexpr double kBudgetS = 2.0;  // the default cap on the timed runs' total time

  // Allocates the flush buffer on the current GPU (a clear ladder::Error when it does not fit).
  GpuTimer();

  int l2_bytes() const { return l2_bytes_; }
  size_t flush_bytes() const { return flush_.nbytes(); }
  // "the 50.0 MiB L2 flushed before each run by reading 100.0 MiB (2x the L2)": what the programs print.
  std::string flush_words() const;

  // Times fn as above; `runs` timed runs at most, fewer when they would take more than budget_s (budget_s <= 0: no
  // cap, exactly `runs`). CUDA errors throw ladder::Error; the events are released either way.
  GpuTiming time(const std::function<void()>& fn, int runs, double budget_s = kBudgetS) const;

 private:
  void flush() const;

  int l2_bytes_ = 0;
  Tensor flush_;
  Tensor sink_;  // where the flush's read would store, never in practice (chapter/l2_flush.h)
};

}  // namespace ladder
