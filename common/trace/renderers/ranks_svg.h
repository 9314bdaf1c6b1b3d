// Every rank of a distributed run in one step as one SVG picture (`ladder-trace svg FOLDER`): one lane group per
// rank (<g class="rank" data-rank="R">: its CPU threads by nesting depth, its GPU streams), all on one time axis; each
// collective's kernels joined across ranks by a line through their ends (a collective ends on every rank at almost
// the same moment); each rank's wait for the last arrival shaded on its kernel; the straggler named in the title and
// on its group. Self-contained like svg.h's pictures: no script, no external resource, an opaque background, the same
// bytes for the same input.
#pragma once

#include <string>

#include "trace/analyses/ranks_lanes.h"

namespace ladder {

// `title`: the folder's name on the picture; `width`: pixels across (400..20000).
std::string ranks_svg(const RanksPicture& picture, const std::string& title, int width = 1200);

}  // namespace ladder
