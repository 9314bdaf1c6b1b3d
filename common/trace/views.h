// Two more views of a Trace for the terminal: one step drawn as a timeline, and the difference between two traces.
#pragma once

#include <string>

#include "trace/analysis.h"
#include "trace/trace.h"

namespace ladder {

// One step as lanes on one time axis, `width` characters wide (clamped to 40..1000): for each CPU thread that did
// anything in the step (a block, headed by its thread id when there are several), its ranges by nesting depth (the
// forward, the ops) and its runtime/driver calls; below, one GPU row per stream ("GPU s7" when there are several),
// then a key naming each kernel (a letter per kernel name, never reused). Each range is
// drawn as [name---] where it fits, or as a run of '#' where it does not; nothing sits under what is idle. Plain text,
// so it reads the same in a log file. `step` indexes step_stats(trace); -1 means the last one.
std::string timeline(const Trace& trace, int step = -1, int width = 100);

// A demangled kernel name without what a reader does not need in a table: the return type, anonymous namespaces and
// the parameter list ("void ch01::(anonymous namespace)::add_bias_plain<float>(const float*, ...)" ->
// "ch01::add_bias_plain<float>").
std::string kernel_display_name(std::string name);

// The terminal's width from $COLUMNS or the tty, else 100; at most 1000 (--width's range is 40..1000).
int terminal_width();

// `s` with every control byte (NUL, ESC, CR, LF, ...; < 0x20 and 0x7f) written as \xHH: names come from the trace
// file, and a name printed raw could move the terminal's cursor or forge lines. Every view prints names through it.
std::string printable(const std::string& s);

// The index in index.steps() of the step named `step`: "3" means ProfilerStep#3, a full name matches itself; -1 if
// `step` is empty. Throws TraceError naming `trace_name` and listing the steps there are when there is no such step.
int find_step(const TraceIndex& index, const std::string& step, const std::string& trace_name);

// What changed from trace `a` to trace `b`, per step: kernels removed and added (by name, with their time), kernels
// in both with their time before and after, the step's wall time and GPU busy time before and after, and the bytes
// its kernels moved where they can be derived from the launching ops' recorded shapes. Means over all steps, or the
// one step named `step` in both (see find_step: an unknown step throws TraceError). A trace without ProfilerStep is
// one window over the whole trace, and the output says so.
std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a = "a",
                        const std::string& name_b = "b", const std::string& step = "");

}  // namespace ladder
