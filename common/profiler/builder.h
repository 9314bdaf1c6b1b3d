// The trace builder: from what CUPTI collected and the host ranges we stamped, the events of a Trace, joined the way
// Kineto joins them. A pure function, tested on the CPU with synthetic records (tests/cpu_builder_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/records.h"
#include "trace/model/trace.h"

namespace ladder {

struct BuiltEvents {
  std::vector<Event> events;      // time order, longest first at equal starts (parents before children)
  size_t incomplete_records = 0;  // GPU records with a zero timestamp, left out
};

// Keeps what lies inside [window_start_ns, window_end_ns] (records of warmup steps arrive late and are stamped before
// the window: they go), joins every API call and GPU activity by correlation id to the op and user range that were
// open (External id, gpu_user_annotation spans), keeps of the driver API only the launch calls, and leaves out the
// runtime calls Kineto leaves out. `host_ranges` are the recorded ranges (ProfilerStep#k, forward ranges, ops); one
// still open (dur_ns < 0) is left out.
//
// `correlation_base` is added to every correlation id (the profiler passes kCorrelationIdBase).
BuiltEvents build_events(const Records& records, std::vector<Event> host_ranges, int64_t window_start_ns,
                         int64_t window_end_ns, int64_t correlation_base = 0);

// Added to CUPTI's correlation ids in our traces. CUPTI numbers a process's API calls from 1, so a short chapter's ids
// are all below 128, where a long-lived PyTorch process's are in the tens of thousands. HolisticTraceAnalysis stores
// the correlation column in the smallest int type that holds it (int8 for ours) and later writes row indices into a
// column of that type, which pandas 3 refuses ("Invalid value ... for dtype 'int8'"): our traces would not load.
// Starting at a million, as CUPTI would in a process that had made a million calls, the column is int32. Every id
// gets the same offset, so ids stay unique and a launch and the work it launched still share one (the flows join).
constexpr int64_t kCorrelationIdBase = 1000000;

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry the API version the call appeared in;
// traces (and the tools reading them, like HTA) use the plain name.
std::string strip_version(std::string name);

// A kernel's mangled name demangled; names that are not mangled (extern "C", cuBLAS's nvjet kernels) come back as is.
std::string demangle(const std::string& name);

}  // namespace ladder
