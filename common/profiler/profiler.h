// A profiler that records what torch.profiler records: host ranges (ProfilerStep#k, the forward's user range, each op)
// on the CPU lane, and, through CUPTI's activity API, the runtime/driver calls and the kernels, memcpys and memsets
// they launched on the GPU lane, joined by correlation ids. Every host range is also pushed as an NVTX range, so
// Nsight Systems shows the same names.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "profiler/schedule.h"
#include "trace/model/trace.h"

namespace ladder {

class Profiler {
 public:
  // Attaches CUPTI (collector.h). Throws ladder::Error (one line, with the CUPTI message) if CUPTI refuses, for
  // example when another profiler holds it. At most one Profiler exists at a time; its end detaches CUPTI again.
  explicit Profiler(const Schedule& schedule);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Call at the start of step k (0-based): turns CUPTI on at the first warmup step, drops the warmup records when
  // the first active step starts, and opens the ProfilerStep#k range for warmup and active steps.
  void begin_step(int k);
  // Call at the end of step k: closes ProfilerStep#k. After the last active step it synchronizes the device,
  // flushes CUPTI (FLUSH_FORCED), turns it off, checks for dropped records and builds the trace.
  void end_step(int k);
  // The trace of the active steps; valid once the last active step has ended.
  Trace take_trace();

  // True while host ranges are being recorded (warmup and active steps).
  bool recording() const;
  static Profiler* current();  // the live profiler, or null

  struct Impl;  // the collector and the host ranges (profiler.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

// One input of an op as torch's record_shapes writes it: "Input Dims", "Input type" ("float", "c10::BFloat16"; empty
// for an input that is not a tensor) and "Input Strides".
struct OpInput {
  std::vector<int64_t> dims;
  std::string type;
  std::vector<int64_t> strides;
};

// A host range (RAII): pushed to NVTX always, recorded in the trace while a profiler records. `cat` is
// Cat::UserAnnotation (ProfilerStep#k, a forward's range) or Cat::CpuOp (an op). While it is open, CUDA work launched
// from this thread carries its id as "External id".
class Range {
 public:
  explicit Range(const std::string& name, Cat cat = Cat::UserAnnotation);
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

  bool recorded() const { return external_id_ >= 0; }  // false while no profiler records: inputs are not needed then
  void record_inputs(std::vector<OpInput> inputs);
  // Args written after the category's own, each value JSON text (profiler/comms.h makes a collective's); the GPU work
  // launched inside an op carries them too.
  void record_args(std::vector<std::pair<std::string, std::string>> args);

 private:
  // The External id of this range's record in the trace (the id CUDA work launched inside it carries), -1 when no
  // profiler records.
  int64_t external_id_ = -1;
  Cat cat_;
};

// While a profiler records (warmup and active steps), notes one allocation (bytes > 0) or free (bytes < 0) of a
// device block at `addr`, with the allocator's totals just after it: the trace's "[memory]" events, the ones
// torch.profiler writes with profile_memory=True. gpu/allocator.h calls it for every block; elsewhere it costs one
// atomic load.
void record_memory(int64_t addr, int64_t bytes, int64_t total_allocated, int64_t total_reserved, int device);

// The loop every chapter runs: for each step of the schedule,
//   ProfilerStep#k { <range_name> { forward() }  cudaDeviceSynchronize }
// and returns the trace of the active steps.
Trace profile(const Schedule& schedule, const std::string& range_name, const std::function<void()>& forward);


}  // namespace ladder
