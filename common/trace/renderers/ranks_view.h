// `ladder-trace ranks`: the figures of ranks_figures.h as three tables (step time per rank, computation and
// communication, waiting in collectives) or as records.
#pragma once

#include <string>
#include <vector>

#include "trace/analyses/ranks_figures.h"
#include "trace/renderers/output_table.h"

namespace ladder {

// How the collectives were matched and the check of it (the spread of their ends), and per rank the collectives only
// some ranks' traces hold: a few lines of text.
std::string matching_note(const std::vector<RankFigures>& ranks, const Matching& matching);

// The view: the three tables as text; OutputFormat::Csv / Json: ranks_frame's records (ranks_figures.h), one per step
// and rank (and per rank, the mean of the steps), every number at full precision and "rank" last. `step`: "" for
// every step, "3" or "ProfilerStep#3" for one; a step no rank has is a TraceError naming the steps there are.
std::string ranks_view(const std::vector<RankFigures>& ranks, const std::string& step, OutputFormat format);

}  // namespace ladder
