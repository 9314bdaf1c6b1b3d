// `ladder-trace memory`: a profile_memory=True trace's memory per step and device (trace/analyses/memory.h): the peaks,
// the curve as a terminal sparkline, the blocks alive at the allocated peak with the op that made each, and the per-op
// allocation statistics of the TensorBoard profiler plugin's Memory view.
#pragma once

#include <string>

#include "trace/model/index.h"
#include "trace/renderers/output_table.h"

namespace ladder {

// Text: one line per step and device with the peaks, then the details (curve, alive blocks, per-op table) of step
// `k`, or, when k is -1, of the step with the highest allocated peak. CSV/JSON: every selected step's figures as one
// list of records, a "table" column saying which kind each is ("peak", "alive", "op"). Throws TraceError when the
// trace holds no [memory] record (recorded without profile_memory=True).
std::string memory_view(const TraceIndex& index, int k, OutputFormat format, int width = 100);

}  // namespace ladder
