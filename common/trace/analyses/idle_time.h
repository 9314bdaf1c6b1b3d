// Why the GPU sat idle, per stream: traceinsight's (HolisticTraceAnalysis's) idle time breakdown, per stream for the
// whole trace and per step. On each stream the GPU activities (kernels, copies, sets) are taken in start order, and the
// gap before each one (its start minus the previous one's end on the stream) is
//   host wait    when its launch call started after the previous activity ended: the GPU had nothing queued, it waited
//                for the CPU to ask for more;
//   kernel wait  otherwise, when the gap is under `kernel_wait_ns`: the cost of starting the next queued kernel;
//   other        otherwise: queued work that waited for something else (an event, another stream, a copy).
// As traceinsight 0.6.1 (hta/analyzers/breakdown_analysis.py, _analyze_idle_time_for_stream), whose rules these are:
//  - a gap is the start minus the previous activity's end in start order, so it is negative where two activities of a
//    stream overlap (a graph replay: common/trace/model/overlap.h), and such a gap counts as it is;
//  - the first activity of a stream has no gap; an activity with no launch call in the trace is never host wait;
//  - the whole-trace rows take the activities traceinsight keeps (hta_window.h: the steps before the last one);
//  - the threshold: traceinsight's default, consecutive_kernel_delay = 30, is documented as nanoseconds but compared
//    with gaps in the trace's own unit, microseconds, so the threshold in effect is 30 us. kIdleKernelWaitNs is that,
//    30,000 ns, so that the figures are theirs; a caller may pass 30 to get what their documentation says.
// Per step, a gap counts in the step of the activity after it (the first activity of a step: the gap since the last
// one of the step before), so a stream's steps add up to its whole-trace rows over the same activities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

constexpr int64_t kIdleKernelWaitNs = 30000;

enum class IdleCategory { HostWait, KernelWait, Other };
const char* idle_category_name(IdleCategory c);  // "host_wait", "kernel_wait", "other": traceinsight's names

struct StreamIdle {
  int step = -1;  // index in index.steps(); -1: the whole trace (traceinsight's activities)
  int64_t device = 0, stream = 0;
  int64_t ns[3] = {0, 0, 0};  // by IdleCategory
  int gaps[3] = {0, 0, 0};    // how many gaps fell in each
  int64_t total_ns() const { return ns[0] + ns[1] + ns[2]; }
};

// The whole-trace rows (step -1), then each step's, by device and stream.
std::vector<StreamIdle> idle_time(const TraceIndex& index, int64_t kernel_wait_ns = kIdleKernelWaitNs);

// As a table "idle_time": step, stream, idle_category, idle_time (us), idle_time_ratio (of the stream's idle time in
// that step), gaps; one row per step, stream and category, traceinsight's three categories each (0 where none).
Table idle_time_table(const std::vector<StreamIdle>& rows, const TraceIndex& index);

}  // namespace ladder
