// HolisticTraceAnalysis's figures, reproduced: which GPU activities HTA analyses and its temporal breakdown over them,
// so that ladder-trace's figures can be set beside HTA's and every difference traced to a definition, not a bug
// (common/trace/tests/cpu_hta_oracle_test.cpp holds these against HTA 0.5.0's own output).
//
// HTA's rule (hta/common/trace.py, Trace._filter_irrelevant_gpu_kernels, run on every load): when a trace has two or
// more ProfilerStep names, it keeps only the GPU activities (kernels, copies, sets) whose launch call (the host event
// with the same "correlation") started before the last ProfilerStep started, and drops the host events that start at
// or after it. "The last ProfilerStep" is the latest start of any event whose name holds "ProfilerStep" and is not a
// GPU activity: the step's CPU range, and also the gpu_user_annotation ranges Kineto draws for the step on each stream,
// which begin when the step's first kernel on that stream begins. So HTA analyses the steps before the last one, plus
// whatever the last step launched before its work reached the GPU. (With one step or none it keeps everything.)
#pragma once

#include <cstdint>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

// The GPU activities HTA keeps, in file order.
std::vector<const Event*> hta_kept_activities(const Trace& trace);

// HTA's compute kernel (hta/utils/utils.py get_kernel_type): a kernel that is not communication (^nccl.*Kernel), not
// memory (Memcpy*, Memset*, dma*), and whose name holds neither "Memcpy" nor "Sync" nor starts with "Memset".
bool hta_is_compute(const Event& e);

// get_temporal_breakdown for one rank (hta/analyzers/breakdown_analysis.py): over `activities`, the span from the
// first start to the last end, the time none ran (idle), the union of the compute kernels (compute), and the rest of
// the busy time (non_compute = span - idle - compute: communication, copies, sets). HTA by default rounds each event
// to whole microseconds first (start up, end down); these are in torch's nanoseconds, as HTA with
// HTA_DISABLE_NS_ROUNDING=1 computes them.
struct HtaTemporal {
  int64_t span_ns = 0, idle_ns = 0, compute_ns = 0, non_compute_ns = 0;
};
HtaTemporal hta_temporal_breakdown(const std::vector<const Event*>& activities);

}  // namespace ladder
