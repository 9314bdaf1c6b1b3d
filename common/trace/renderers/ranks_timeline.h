// Every rank of a distributed run in one step, for the terminal (`ladder-trace timeline FOLDER`): what ranks_svg.h
// draws, as text. Per rank a block of rows on one time axis: its CPU threads (the outer two nesting depths) and its
// GPU streams, a column a slice of time, the mark of what ran there ('#' compute, '=' communication, '~' the rank
// waiting for the last one in a collective, '-' copies and sets, '+' CPU ranges, ':' runtime calls); the straggler
// named, and every collective of the step with each rank's wait. Plain text: it reads the same in a log file.
#pragma once

#include <string>

#include "trace/analyses/ranks_lanes.h"

namespace ladder {

// `width`: characters across (clamped to 60..1000).
std::string ranks_timeline(const RanksPicture& picture, int width = 100);

}  // namespace ladder
