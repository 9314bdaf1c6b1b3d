// torch's key_averages().table(sort_by="cuda_time_total") computed from a Trace: the same rows, times and layout torch
// prints, so a reader can put our table beside PyTorch's (tests/data/key_averages_tables.txt holds torch's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/output_table.h"

#include "trace/index.h"
#include "trace/trace.h"

namespace ladder {

// The table's layout: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %,
// CUDA total, CUDA time avg, # of Calls, then the two footers.
// Self CPU = own time minus direct children (same thread, nested); an op's CUDA total = its kernels (matched by
// External id to the innermost op) plus its children's. ProfilerStep#k rows aggregate as "ProfilerStep*".
std::string summary_table(const TraceIndex& index, int row_limit = 100);
std::string summary_table(const Trace& trace, int row_limit = 100);

// What key_averages(...).table(...) takes, and more.
struct TableOptions {
  int row_limit = 100;                      // -1: every row
  std::string sort_by = "cuda_time_total";  // one of table_sort_keys()
  int name_width = 55;                      // torch's max_name_column_width: longer names are cut to it
  bool group_by_input_shape = false;        // key_averages(group_by_input_shape=True): rows per name and shapes
  std::string filter;                       // an ECMAScript regex searched in each row's name ("mm" matches aten::mm)
  OutputFormat format = OutputFormat::Text;
};
// The table as torch prints it; with profile_memory (Trace::profile_memory) the CPU Mem / Self CPU Mem columns, and
// CUDA Mem / Self CUDA Mem when some self CUDA memory is positive, sit before "# of Calls" as in torch, with a
// "[memory]" row for the allocations no CPU event was open around. With the "flops" torch's with_flops=True records on
// its ops, torch's last column, "Total FLOPs" scaled as torch scales it (Total MFLOPs, Total GFLOPs, ...: the unit of
// the smallest positive row), "--" for a row without; as CSV/JSON a "flops" column of plain FLOPs. Throws UsageError
// for an unknown sort key or a filter that is not a regex.
std::string summary_table(const TraceIndex& index, const TableOptions& options);
// torch's sort keys: cpu_time_total, self_cpu_time_total, cuda_time_total, ...; count.
const std::vector<std::string>& table_sort_keys();

// The table's figures before any layout: what summary_table prints, as numbers. Times in ns, memory in bytes.
struct KeyAveragesRow {
  std::string name;          // "ProfilerStep*" for every ProfilerStep#k; "[memory]" for records no event took
  std::string input_shapes;  // with group_by_input_shape: Python's str() of the shapes ("[[256, 512], []]")
  int64_t calls = 0, self_cpu_ns = 0, cpu_total_ns = 0, self_cuda_ns = 0, cuda_total_ns = 0;
  int64_t cpu_memory = 0, self_cpu_memory = 0, cuda_memory = 0, self_cuda_memory = 0;  // bytes (profile_memory)
  double flops = 0;     // the "flops" with_flops=True recorded on its ops, summed (torch's FunctionEventAvg.flops)
  bool async = false;   // a c10d collective: torch prints "0" for its CPU total %
  bool device = false;  // kernel/memcpy/memset: counts toward "Self CUDA time total"
};
struct KeyAverages {
  std::vector<KeyAveragesRow> rows;  // sorted by the options' key, filtered, at most row_limit
  int64_t self_cpu_total_ns = 0, self_cuda_total_ns = 0;  // the footers, over every row (before filter and limit)
  bool device_time = false;    // some row has CUDA time: the CUDA columns are shown
  bool memory = false;         // a profile_memory trace: the CPU memory columns
  bool device_memory = false;  // and some self CUDA memory is positive: the CUDA memory columns
  std::string flops_header;    // "Total MFLOPs" (torch's unit of the smallest positive row); "" without FLOPs
  double flops_scale = 1;      // FLOPs times this: the column's numbers
};
// The rows torch's key_averages() builds, sorted and cut as `options` say (its format and name_width aside). Throws
// UsageError for an unknown sort key or a filter that is not a regex.
KeyAverages key_averages(const TraceIndex& index, const TableOptions& options);
// The figures laid out as torch's table (options.name_width, group_by_input_shape), or as records for CSV/JSON.
std::string key_averages_text(const KeyAverages& table, const TableOptions& options);
OutputTable key_averages_records(const KeyAverages& table, bool group_by_input_shape);

}  // namespace ladder
