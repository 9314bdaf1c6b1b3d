#include "chapter/gpu_timer.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <type_traits>

#include "chapter/l2_flush.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/stream.h"

namespace ladder {

namespace {

// A CUDA event that is destroyed however its scope is left, a throwing CUDA_CHECK included.
struct EventDeleter {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDeleter>;

Event make_event() {
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreate(&e));
  return Event(e);
}

double elapsed_us(const Event& start, const Event& stop) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1e3;
}

int current_l2_bytes() {
  int device = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return l2;
}

}  // namespace

double median_of_sorted(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double GpuTiming::median_us() const { return median_of_sorted(us); }

GpuTimer::GpuTimer()
    : l2_bytes_(current_l2_bytes()),
      // float32 elements: 4 bytes each, and an L2's size is a multiple of 16 (the read's loads)
      flush_(empty({int64_t{kFlushTimesL2} * l2_bytes_ / 4}, DType::F32)),
      sink_(empty({1}, DType::F32)) {
  // Zeros once, so the flush reads defined memory; each flush reads them again and writes nothing.
  CUDA_CHECK(cudaMemsetAsync(flush_.data, 0, flush_bytes(), current_stream()));
}

std::string GpuTimer::flush_words() const {
  return fmt::format("the {:.1f} MiB L2 flushed before each run by reading {:.1f} MiB ({}x the L2)",
                     l2_bytes_ / 1048576.0, flush_bytes() / 1048576.0, kFlushTimesL2);
}

void GpuTimer::flush() const { read_through_l2(flush_, sink_, current_stream()); }

GpuTiming GpuTimer::time(const std::function<void()>& fn, int runs, double budget_s) const {
  const cudaStream_t stream = current_stream();
  const Event warm_start = make_event(), warm_stop = make_event();
  CUDA_CHECK(cudaEventRecord(warm_start.get(), stream));
  for (int i = 0; i < kWarmupRuns; ++i) {
    flush();
    fn();
  }
  CUDA_CHECK(cudaEventRecord(warm_stop.get(), stream));
  CUDA_CHECK(cudaEventSynchronize(warm_stop.get()));
  if (budget_s > 0) {
    const double per_run_s = std::max(elapsed_us(warm_start, warm_stop) * 1e-6 / kWarmupRuns, 1e-9);
    runs = static_cast<int>(std::clamp(budget_s / per_run_s, double(std::min(runs, 3)), double(runs)));
  }

  std::vector<Event> start, stop;
  for (int i = 0; i < runs; ++i) {
    start.push_back(make_event());
    stop.push_back(make_event());
  }
  for (int i = 0; i < runs; ++i) {
    flush();
    CUDA_CHECK(cudaEventRecord(start[i].get(), stream));
    fn();
    CUDA_CHECK(cudaEventRecord(stop[i].get(), stream));
  }
  GpuTiming t;
  if (runs == 0) return t;
  CUDA_CHECK(cudaEventSynchronize(stop.back().get()));
  for (int i = 0; i < runs; ++i) t.us.push_back(elapsed_us(start[i], stop[i]));
  std::sort(t.us.begin(), t.us.end());
  return t;
}

}  // namespace ladder
