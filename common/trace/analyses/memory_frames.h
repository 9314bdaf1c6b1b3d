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

// The three in one table, as `ladder-trace memory --csv` prints them and the Python package's memory() returns them:
// a "table" column says which kind each row is ("peak", "alive", "op"), then step, device, op, calls, peak_allocated,
// peak_allocated_us, peak_reserved, before_trace, addr, bytes, alloc_us, size_increase, self_size_increase,
// allocation_count, self_allocation_count, allocation_size, self_allocation_size: every number a float column, NaN
// where the row's kind has no such figure (a peak has no addr) and peak_reserved NaN where the trace holds no "Total
// Reserved"; the peaks and their blocks step by step, then the per-op statistics.
Table memory_frame(const TraceIndex& index, const MemoryReport& report);

}  // namespace ladder
