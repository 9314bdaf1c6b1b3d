// `ladder-trace svg --memory`: a profile_memory=True trace's allocated and reserved memory over time
// (trace/analyses/memory.h), one panel per device, drawn as a self-contained SVG in the style of trace/renderers/svg.h:
// no script, no external resource, an opaque background, the peaks written on the picture, and the same bytes for the
// same input.
#pragma once

#include <string>

#include "trace/model/index.h"
#include "trace/renderers/svg.h"

namespace ladder {

// Draws opt.step's window (find_step), or every record when opt.step is empty; the steps are marked on the time axis.
// Uses opt.title and opt.width; --from/--to and --focus are for the timeline picture (UsageError here). Throws
// TraceError when the trace holds no [memory] record.
std::string memory_svg(const TraceIndex& index, const SvgOptions& options);

}  // namespace ladder
