// Where each step's wall time went (`ladder-trace breakdown` prints it: breakdown_view.h), as the TensorBoard profiler plugin's Overview defined
// it (kineto tb_plugin/README.md, before its removal): every moment of the step goes to the highest-priority category
// active at that moment, Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other, so the
// parts add up to the step's wall time. Beside it, how long the GPU sat idle and how much its streams overlapped.
//
// The categories, from the events:
//   Kernel         kernels, except communication kernels
//   Memcpy, Memset gpu_memcpy, gpu_memset
//   Communication  communication.h's one definition: NCCL's kernels (ncclKernel_*, ncclDevKernel_*) and the CPU
//                  ranges of a collective (record_param_comms, nccl:*, gloo:*, c10d::*: gloo has no GPU side)
//   Runtime        CUDA runtime and driver calls (cudaLaunchKernel, cudaMemcpyAsync, cudaStreamSynchronize, ...)
//   DataLoader     ops named enumerate(DataLoader)#... or enumerate(DataPipe)#...
//   CPU Exec       every other cpu_op and user_annotation, but not the ProfilerStep#k range itself (it spans the step)
//   Other          none of these: Python between ops, or time the trace does not account for
// GPU work of every device and stream counts, by its own time: a kernel that runs after its step's range ended counts
// in the time it ran, as the plugin counts it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/model/index.h"

namespace ladder {

enum class Part { Kernel, Memcpy, Memset, Communication, Runtime, DataLoader, CpuExec, Other };
constexpr int kParts = 8;
const char* part_name(Part p);
// The category of one event; Part::Other for events that count in none (python frames, GPU annotations, steps).
Part part_of(const Event& e);

struct TimeBreakdown {
  int64_t from_ns = 0, to_ns = 0;
  std::array<int64_t, kParts> ns{};  // adds up to to_ns - from_ns
  int64_t gpu_busy_ns = 0;     // the union of kernels, copies and sets (any device, any stream)
  int64_t gpu_summed_ns = 0;   // their durations summed: > busy when streams ran at once
  int64_t compute_ns = 0;      // the union of kernels that are not communication (HTA's "compute")
  int64_t wall_ns() const { return to_ns - from_ns; }
  int64_t gpu_idle_ns() const { return wall_ns() - gpu_busy_ns; }
};

// The trace's activity as a sequence of time segments, each with its winning category and how many GPU activities ran:
// built once (O(n log n)), then any window is summed in time linear in the segments it covers.
class Timeline {
 public:
  explicit Timeline(const Trace& trace);
  TimeBreakdown over(int64_t from_ns, int64_t to_ns) const;
  // The first GPU activity's start and the last one's end; {0, 0} when there is none (HTA's window).
  int64_t gpu_first_ns() const { return gpu_first_; }
  int64_t gpu_last_ns() const { return gpu_last_; }

 private:
  struct Segment {
    int64_t start = 0;
    uint8_t part = 0;
    int32_t gpu = 0;      // GPU activities running
    int32_t compute = 0;  // of them, kernels that are not communication
  };
  std::vector<Segment> segments_;  // each lasts until the next one's start; the last is a sentinel
  int64_t gpu_first_ = 0, gpu_last_ = 0;
};

// Per step (index.steps(); `step` >= 0: that one only), by name, and with more than one their mean ("mean of N").
// Throws TraceError for a trace with no step time at all.
std::vector<std::pair<std::string, TimeBreakdown>> step_breakdowns(const TraceIndex& index, int step);

}  // namespace ladder
