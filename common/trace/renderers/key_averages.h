// torch's key_averages().table(sort_by="cuda_time_total") computed from a Trace: the same rows, times and layout torch
// prints, so a reader can put our table beside PyTorch's (tests/data/key_averages_tables.txt holds torch's own).
#pragma once

#include <string>
#include <vector>

#include "trace/renderers/output_table.h"

#include "trace/analyses/key_averages_rows.h"
#include "trace/model/index.h"
#include "trace/model/trace.h"

namespace ladder {

// The table's layout: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %,
// CUDA total, CUDA time avg, # of Calls, then the two footers.
// Self CPU = own time minus direct children (same thread, nested); an op's CUDA total = its kernels (matched by
// External id to the innermost op) plus its children's. ProfilerStep#k rows aggregate as "ProfilerStep*".
std::string summary_table(const TraceIndex& index, int row_limit = 100);
std::string summary_table(const Trace& trace, int row_limit = 100);

// What key_averages(...).table(...) takes, and more: the rows' options (key_averages_rows.h) and the layout's.
struct TableOptions : KeyAveragesOptions {
  int name_width = 55;  // torch's max_name_column_width: longer names are cut to it
  OutputFormat format = OutputFormat::Text;
};
// The table as torch prints it; with profile_memory (Trace::profile_memory) the CPU Mem / Self CPU Mem columns, and
// CUDA Mem / Self CUDA Mem when some self CUDA memory is positive, sit before "# of Calls" as in torch, with a
// "[memory]" row for the allocations no CPU event was open around. With the "flops" torch's with_flops=True records on
// its ops, torch's last column, "Total FLOPs" scaled as torch scales it (Total MFLOPs, Total GFLOPs, ...: the unit of
// the smallest positive row), "--" for a row without. As CSV/JSON: key_averages_frame's records (torch's column names,
// times in us, memory in bytes, FLOPs unscaled). Throws UsageError for an unknown sort key or a filter that is not a
// regex.
std::string summary_table(const TraceIndex& index, const TableOptions& options);

// The figures laid out as torch's table (options.name_width, group_by_input_shape).
std::string key_averages_text(const KeyAverages& table, const TableOptions& options);

}  // namespace ladder
