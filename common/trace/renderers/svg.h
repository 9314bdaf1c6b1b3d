// One step (or a time window, or one op's subtree) of a trace drawn as a self-contained SVG picture, for a README:
// a lane per CPU thread with its ranges, ops and runtime/driver calls nested by depth, a lane per GPU stream, an arrow
// from each launch call to the work it launched, a time axis in us, the measured duration on every bar wide enough to
// hold it, and a legend for what is too narrow to label: such a bar shows its name's number ([3]) and as much of the
// name as fits, its namespace dropped first, and the legend lists every number drawn, with the count and total time
// of every drawn event of that name. Names are cut between UTF-8 characters, never inside one. No script, no external
// resource, generic font families, an opaque background (it reads the same in a light and a dark page), and the same
// bytes for the same input.
#pragma once

#include <optional>
#include <string>

#include "trace/model/index.h"

namespace ladder {

struct SvgOptions {
  std::string step;  // "4" or "ProfilerStep#4" (find_step); empty: the last step (a trace without steps: all of it)
  // A window in us from the trace's first event, instead of a step; either end may be left open.
  std::optional<double> from_us, to_us;
  // Only the subtree of one host event and the GPU work it launched, zoomed to their span. "aten::linear" is the first
  // event of that name in the step (or window), "aten::linear#2" the second; a name that itself ends in #digits
  // (ProfilerStep#4) is matched whole first.
  std::string focus;
  std::string title;  // the trace's name on the picture (the file's base name: a path would make the bytes depend on it)
  int width = 1200;   // pixels across
};

// Throws UsageError for a bad window or width, TraceError for a step or focus the trace does not hold.
std::string trace_svg(const TraceIndex& index, const SvgOptions& options);

}  // namespace ladder
