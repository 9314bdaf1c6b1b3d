// What `ladder-trace diff` compares (diff.h prints it): per trace, the mean step (or one step) and its kernels,
// copies and sets by name, with their counts, times and bytes moved; and the rows of two such summaries side by side.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

// One kernel, copy or set, by name, per step.
struct DiffActivity {
  Cat cat = Cat::Kernel;
  std::string op;    // the torch op (namespace::name) that launched it; "" when none
  int count = 0;     // per step
  double us = 0;     // per step, summed
  double bytes = 0;  // per step, where known: a kernel's from its op's shapes, a copy's or set's from the trace
  bool bytes_known = true;
};
struct DiffSummary {
  int steps = 0;
  bool whole_trace = false;
  std::string step_name;  // the one step compared, when one was chosen
  double step_us = 0, busy_us = 0, kernels = 0, copies = 0, bytes = 0;
  bool bytes_known = true;
  bool no_shapes = false;  // the kernels' bytes are not derivable because no op has recorded shapes,
  std::string no_bytes;    // or for these other reasons
  std::map<std::string, DiffActivity> by_name;
  std::vector<std::string> order;  // first appearance in a step
};

// Means over every step of `t`, or the one step named `step` ("3" = ProfilerStep#3; see find_step: an unknown step
// throws TraceError naming `trace_name`). Linear in the events.
DiffSummary diff_summary(const Trace& t, const std::string& step, const std::string& trace_name);

enum class DiffChange { Gone, New, Both };
struct DiffRow {
  DiffChange change;
  const std::string* name;
  const DiffActivity *a, *b;  // nullptr on the side without it
};

// Gone first, then new, then those in both: what fusion removed and added reads at the top. The rows point into the
// two summaries.
std::vector<DiffRow> diff_rows(const DiffSummary& sa, const DiffSummary& sb);

}  // namespace ladder
