// What changed from one trace to another, for the terminal: ladder-trace diff.
#pragma once

#include <string>

#include "trace/trace.h"

namespace ladder {

// What changed from trace `a` to trace `b`, per step: kernels removed and added (by name, with their time), kernels
// in both with their time before and after, the step's wall time and GPU busy time before and after, and the bytes
// its kernels moved where they can be derived from the launching ops' recorded shapes (op_work, trace/work.h). Means
// over all steps, or the one step named `step` in both (see find_step: an unknown step throws TraceError). A trace
// without ProfilerStep is one window over the whole trace, and the output says so.
std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a = "a",
                        const std::string& name_b = "b", const std::string& step = "");

}  // namespace ladder
