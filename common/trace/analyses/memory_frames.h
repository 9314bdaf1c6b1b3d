// A memory report (memory.h) as three typed tables, one per kind of row `ladder-trace memory --csv` mixes in one
// (its "table" column): the peaks per step and device, the blocks alive at each peak, and the per-op statistics. The
// Python package's memory_steps(), memory_blocks() and memory_ops() are these; times in microseconds from the step's
// start, sizes in bytes.
#pragma once

#include "trace/analyses/memory.h"
#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

// step, device, peak_allocated, peak_allocated_us, peak_reserved (-1: the trace holds no "Total Reserved"),
// alive_blocks, before_trace (what the peak holds of blocks allocated before the trace began).
Table memory_steps_frame(const TraceIndex& index, const MemoryReport& report);
// step, device, op (the op that made the block, "" when none), addr, bytes, alloc_us: the blocks alive at the peak.
Table memory_blocks_frame(const TraceIndex& index, const MemoryReport& report);
// step, device, op, calls, size_increase, self_size_increase, allocation_count, self_allocation_count,
// allocation_size, self_allocation_size: the TensorBoard plugin's per-op statistics.
Table memory_ops_frame(const TraceIndex& index, const MemoryReport& report);

}  // namespace ladder
