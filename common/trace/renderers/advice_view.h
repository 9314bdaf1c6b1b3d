// `ladder-trace advise`: the findings of advice.h, one line each (step, finding, figure, and the rung that teaches the
// fix), or the advice table as CSV or JSON. table_records() is the CSV/JSON form of any Table that this view uses.
#pragma once

#include <string>
#include <vector>

#include "trace/analyses/advice.h"
#include "trace/analyses/table.h"
#include "trace/renderers/output_table.h"

namespace ladder {

std::string advice_view(const std::vector<Finding>& findings, OutputFormat format);

// Any Table as records: every cell at full precision (a float as the shortest text that reads back the same), NaN
// empty or null.
OutputTable table_records(const Table& table);

}  // namespace ladder
