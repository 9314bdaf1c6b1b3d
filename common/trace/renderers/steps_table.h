// The regime table: the step statistics of steps.h, one row per step, as text or records.
#pragma once

#include <string>

#include "trace/analyses/steps.h"
#include "trace/model/index.h"
#include "trace/renderers/output_table.h"

namespace ladder {

// "Per step: is the GPU waiting for the CPU, or the CPU for the GPU?": kernels, wall time, GPU busy time and its share,
// CPU time in launch calls and in synchronizing, one row per step. OutputFormat::Csv / Json: the same rows as records
// for pandas or a CI check, with the columns step, kernels, wall_us, gpu_busy_us, busy_pct, cpu_launch_us, cpu_sync_us
// (a trace without ProfilerStep has one row, step "whole trace").
std::string regime_table(const TraceIndex& index);
std::string regime_table(const TraceIndex& index, OutputFormat format);

}  // namespace ladder
