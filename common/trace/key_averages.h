// torch's key_averages().table(sort_by="cuda_time_total") computed from a Trace: the same rows, times and layout torch
// prints, so a reader can put our table beside PyTorch's (tests/data/key_averages_tables.txt holds torch's own).
#pragma once

#include <string>

#include "trace/index.h"
#include "trace/trace.h"

namespace ladder {

// The table's layout: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %,
// CUDA total, CUDA time avg, # of Calls, then the two footers.
// Self CPU = own time minus direct children (same thread, nested); an op's CUDA total = its kernels (matched by
// External id to the innermost op) plus its children's. ProfilerStep#k rows aggregate as "ProfilerStep*".
std::string summary_table(const TraceIndex& index, int row_limit = 100);
std::string summary_table(const Trace& trace, int row_limit = 100);

}  // namespace ladder
