// The CUPTI side of the profiler, and the only file that talks to CUPTI: it turns activity recording on and off,
// takes CUPTI's buffers as they fill, copies each record into plain `Records` (records.h), checks that nothing was
// dropped, and detaches CUPTI again when profiling is over (cuptiFinalize), so the program runs at full speed after.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "profiler/records.h"

namespace ladder {

class CuptiCollector {
 public:
  // Registers the buffer callbacks. Throws ladder::Error ("the profiler could not start: ...", one line) if CUPTI
  // refuses, for example because Nsight Systems or Compute already holds it. One collector at a time.
  CuptiCollector();
  // Stops recording if still on, hands back every buffer, and detaches CUPTI (cuptiFinalize).
  ~CuptiCollector();
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  void enable();   // starts recording: kernels, copies, sets, runtime calls, driver launches, external ids
  void discard();  // drops what has arrived so far (the warmup steps' records)
  // Flushes (FLUSH_FORCED: also the buffers that are not full), stops recording, and returns what was recorded, with
  // kernel arguments worked out from `props` (one per device). Throws ladder::Error if CUPTI dropped records.
  Records finish(const std::vector<cudaDeviceProp>& props);

 private:
  bool on_ = false;
};

// While a range is open, every CUDA call made on this thread is tagged with its id (see ExternalRecord).
void push_external_id(ExternalRecord::Stack stack, int64_t id);
void pop_external_id(ExternalRecord::Stack stack);

// CUPTI's version number (130001 for CUDA 13.0), as Kineto writes it in a trace's "cupti_version".
uint32_t cupti_version();

// Nanoseconds on the clock CUPTI stamps its records with, so host ranges and GPU activities share one time axis.
int64_t trace_clock_ns();

}  // namespace ladder
