// Any Table (trace/analyses/table.h) as records for a program: CSV (RFC 4180) with a header line, or JSON (a list of
// objects, one a line), every cell at full precision. An int column prints as an integer; a float column as the
// shortest decimal that reads back to the same double, always with a '.' or an exponent so that pandas and jq read it
// as a float (NaN, or infinite: an empty CSV cell, JSON null); a text column as a string, quoted and escaped.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trace/analyses/table.h"
#include "trace/renderers/output_table.h"

namespace ladder {

std::string table_csv(const Table& t);
std::string table_json(const Table& t);
// table_csv or table_json, as `format` says (Text is not records: a logic error).
std::string table_records(const Table& t, OutputFormat format);

// A folder's tables of one analysis (each rank's, the same columns) as one table: their rows one after the other and
// a "rank" column last, as HolisticTraceAnalysis's frames have it. Tables whose columns differ are a logic error.
Table join_rank_tables(const std::vector<std::pair<int, Table>>& tables);

}  // namespace ladder
