// `ladder-trace advise`: the findings of advice.h, one line each (step, finding, figure, and the rung that teaches the
// fix), or the advice table as CSV or JSON (table_records.h).
#pragma once

#include <string>
#include <vector>

#include "trace/analyses/advice.h"
#include "trace/renderers/output_table.h"

namespace ladder {

std::string advice_view(const std::vector<Finding>& findings, OutputFormat format);

}  // namespace ladder
