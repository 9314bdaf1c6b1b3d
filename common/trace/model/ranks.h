// A folder of traces, one per rank, as a distributed run leaves them (torchtune: rank<R>.<ns>.pt.trace.json.gz).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/input.h"
#include "trace/model/trace.h"

namespace ladder {

struct RankTrace {
  int rank = 0;
  std::string path;
  Trace trace;
};

// The rank a trace says it is: "rank" in its distributedInfo (torch.distributed writes it), else the number after
// "rank" in the file's name ("rank3.123.pt.trace.json.gz", "rank-3.json.gz", "rank_3_trace.json"); -1 if neither.
int rank_of(const Trace& trace, const std::string& path);

// Every *.json and *.gz file directly in `folder`, each one rank, read in parallel (at most `threads` at a time:
// 0 means one per core; each holds one trace's events, so fewer threads is less memory), sorted by rank. Throws
// TraceError, one line, for an empty folder, a file whose rank is unknown or claimed twice (naming the files), or
// the first file that does not load.
std::vector<RankTrace> load_ranks(const std::string& folder, uint64_t max_json_bytes = kDefaultMaxJsonBytes,
                                  int threads = 0);
// A folder of ranks, or one trace file (or "-", stdin) as its only rank (its rank from rank_of, else 0).
std::vector<RankTrace> load_ranks_or_file(const std::string& path, uint64_t max_json_bytes = kDefaultMaxJsonBytes,
                                          int threads = 0);

}  // namespace ladder
