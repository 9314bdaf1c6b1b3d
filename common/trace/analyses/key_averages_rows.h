// torch's key_averages() computed from a Trace: one row per op name (and input shapes), with torch's times, memory and
// FLOPs, sorted and cut as torch's table(sort_by=..., row_limit=...) is. key_averages.h lays them out as torch prints
// them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/model/index.h"

namespace ladder {

// torch's sort keys: cpu_time_total, self_cpu_time_total, cuda_time_total, ...; count.
const std::vector<std::string>& table_sort_keys();

// The rows' options, as key_averages(...).table(...) takes them.
struct KeyAveragesOptions {
  int row_limit = 100;                      // -1: every row
  std::string sort_by = "cuda_time_total";  // one of table_sort_keys()
  bool group_by_input_shape = false;        // key_averages(group_by_input_shape=True): rows per name and shapes
  std::string filter;                       // an ECMAScript regex searched in each row's name ("mm" matches aten::mm)
};

// The table's figures before any layout: what summary_table prints, as numbers. Times in ns, memory in bytes.
struct KeyAveragesRow {
  std::string name;          // "ProfilerStep*" for every ProfilerStep#k; "[memory]" for records no event took
  std::string input_shapes;  // with group_by_input_shape: Python's str() of the shapes ("[[256, 512], []]")
  int64_t calls = 0, self_cpu_ns = 0, cpu_total_ns = 0, self_cuda_ns = 0, cuda_total_ns = 0;
  int64_t cpu_memory = 0, self_cpu_memory = 0, cuda_memory = 0, self_cuda_memory = 0;  // bytes (profile_memory)
  double flops = 0;     // the "flops" with_flops=True recorded on its ops, summed (torch's FunctionEventAvg.flops)
  // CPU total and CUDA total in microseconds as torch's floats sum them (KeyAverages::torch_floats): what torch divides
  // by the calls for its averages.
  double torch_cpu_total_us = 0, torch_cuda_total_us = 0;
  bool async = false;   // a c10d collective: torch prints "0" for its CPU total %
  bool device = false;  // kernel/memcpy/memset: counts toward "Self CUDA time total"
  bool gpu_lane = false;  // from the GPU lanes (a kernel, or a range's span there), not a CPU range of the same name
};
struct KeyAverages {
  std::vector<KeyAveragesRow> rows;  // sorted by the options' key, filtered, at most row_limit
  int64_t self_cpu_total_ns = 0, self_cuda_total_ns = 0;  // the footers, over every row (before filter and limit)
  bool device_time = false;    // some row has CUDA time: the CUDA columns are shown
  bool torch_floats = false;   // the trace says when torch's profiler started: the rows' torch_*_us are torch's sums
  bool memory = false;         // a profile_memory trace: the CPU memory columns
  bool device_memory = false;  // and some self CUDA memory is positive: the CUDA memory columns
  std::string flops_header;    // "Total MFLOPs" (torch's unit of the smallest positive row); "" without FLOPs
  double flops_scale = 1;      // FLOPs times this: the column's numbers
};
// The rows torch's key_averages() builds, sorted and cut as `options` say. Throws UsageError for an unknown sort key
// or a filter that is not a regex.
KeyAverages key_averages(const TraceIndex& index, const KeyAveragesOptions& options);

// The rows as a typed table with torch's table's column names, every column torch can print, at full precision:
// "Name", "Input Shapes" (grouped by them only), "Self CPU %", "Self CPU", "CPU total %", "CPU total",
// "CPU time avg", "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg" (times in microseconds, shares in
// percent: NaN where the total is 0, as torch's "NaN"), "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem" (bytes;
// 0 without profile_memory), "# of Calls", "Total FLOPs" (unscaled; NaN where torch prints "--"), and ours last:
// "device", "CPU" or "CUDA" (a range torch lists twice, its CPU range and its span on the GPU lane, told apart).
Table key_averages_frame(const KeyAverages& table, bool group_by_input_shape);
}  // namespace ladder
