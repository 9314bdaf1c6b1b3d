// One step of a trace drawn for the terminal: CPU and GPU lanes on one time axis.
#pragma once

#include <string>

#include "trace/model/trace.h"

namespace ladder {

// One step as lanes on one time axis, `width` characters wide (clamped to 40..1000): for each CPU thread that did
// anything in the step, a block headed by its thread (id, the name the file gives it, and which is the main thread;
// the main thread's block first), with its ranges by nesting depth and its runtime/driver calls, each by its own name
// (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch); below, one GPU row per stream ("GPU s7" when there are
// several), each kernel a letter repeated over its time. Each range is drawn as [name---] where it fits, cut to fit
// ("[li~ar]", a CUDA call by its capitals: "[LKE]") where it does not, and as '#' under 3 columns; two ranges never
// share a column. A key under the rows explains every mark it used, names what each cut label stands for, and gives
// each kernel name once, with how many ran in the step and their total time. Nothing sits under what is idle. Plain
// text, so it reads the same in a log file. `step` indexes step_stats(trace); -1 means the last one.
std::string timeline(const Trace& trace, int step = -1, int width = 100);

}  // namespace ladder
