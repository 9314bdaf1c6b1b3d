// The per-step tables as typed tables (table.h), every time in microseconds at full precision: what `ladder-trace
// summary --steps --csv` and `ladder-trace breakdown --csv` print and the Python package's steps() and breakdown()
// return.
#pragma once

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

// step_stats (steps.h), one row per step: step, kernels, wall_us, gpu_busy_us, busy_pct (0 for a step of no length),
// cpu_launch_us, cpu_sync_us.
Table steps_frame(const TraceIndex& index);

// step_breakdowns (breakdown.h): per step (`step` >= 0: that one) and their mean: step, wall_us, one <part>_us per
// part (kernel_us, memcpy_us, memset_us, communication_us, runtime_us, dataloader_us, cpu_exec_us, other_us),
// gpu_busy_us, gpu_idle_us, gpu_summed_us, concurrency (summed / busy; NaN when the GPU was never busy).
Table breakdown_frame(const TraceIndex& index, int step);

}  // namespace ladder
