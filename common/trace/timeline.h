// One step of a trace drawn for the terminal: CPU and GPU lanes on one time axis.
#pragma once

#include <string>

#include "trace/trace.h"

namespace ladder {

// One step as lanes on one time axis, `width` characters wide (clamped to 40..1000): for each CPU thread that did
// anything in the step (a block, headed by its thread id when there are several), its ranges by nesting depth (the
// forward, the ops) and its runtime/driver calls; below, one GPU row per stream ("GPU s7" when there are several),
// then a key naming each kernel (a letter per kernel name, never reused). Each range is
// drawn as [name---] where it fits, or as a run of '#' where it does not; nothing sits under what is idle. Plain text,
// so it reads the same in a log file. `step` indexes step_stats(trace); -1 means the last one.
std::string timeline(const Trace& trace, int step = -1, int width = 100);

}  // namespace ladder
