// Two more views of a Trace for the terminal: one step drawn as a timeline, and the difference between two traces.
#pragma once

#include <string>

#include "trace/analysis.h"
#include "trace/trace.h"

namespace ladder {

// One step as lanes on one time axis, `width` characters wide: the CPU lane's ranges by nesting depth (the forward,
// the ops, the runtime/driver calls) above, the GPU lane's kernels below, then a key naming each kernel. Each range is
// drawn as [name---] where it fits, or as a run of '#' where it does not; nothing sits under what is idle. Plain text,
// so it reads the same in a log file. `step` indexes step_stats(trace); -1 means the last one.
std::string timeline(const Trace& trace, int step = -1, int width = 100);

// A demangled kernel name without what a reader does not need in a table: the return type, anonymous namespaces and
// the parameter list ("void ch01::(anonymous namespace)::add_bias_plain<float>(const float*, ...)" ->
// "ch01::add_bias_plain<float>").
std::string kernel_display_name(std::string name);

// The terminal's width from $COLUMNS or the tty, else 100.
int terminal_width();

// What changed from trace `a` to trace `b`, per step: kernels removed and added (by name, with their time), kernels
// in both with their time before and after, the step's wall time and GPU busy time before and after, and the bytes
// its kernels moved where they can be derived from the launching ops' recorded shapes.
std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a = "a", const std::string& name_b = "b");

}  // namespace ladder
