// `ladder-trace breakdown`: the step time breakdown (breakdown.h) per step and their mean, as a table: where the wall
// time went, then the GPU's busy, idle and summed time.
#pragma once

#include <string>

#include "trace/analyses/breakdown.h"
#include "trace/model/index.h"
#include "trace/renderers/output_table.h"

namespace ladder {

// Per step (index.steps(); `step` >= 0: that one only) and, with more than one, their mean, as a table.
std::string breakdown_view(const TraceIndex& index, int step, OutputFormat format);

}  // namespace ladder
