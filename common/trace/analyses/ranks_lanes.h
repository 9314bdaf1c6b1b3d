// Every rank of a distributed run in one step, on one time axis: what `ladder-trace svg FOLDER` (ranks_svg.h) and
// `ladder-trace timeline FOLDER` (ranks_timeline.h) draw. Per rank, a group of lanes (its CPU threads, a row per
// nesting depth, and its GPU streams), each collective joined across ranks with every rank's wait for the last
// arrival, and the step's straggler: the rank the others waited for longest. Collectives are matched and waits
// counted exactly as `ranks` does (ranks_view.h); communication and computation are communication.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/ranks_figures.h"

namespace ladder {

struct RankBar {
  enum Kind : uint8_t { Range, Runtime, Compute, Comm, Copy };
  int64_t ts_ns = 0, end_ns = 0;
  Kind kind = Range;
  int count = 1;     // > 1: that many bars, each narrower than the picture's resolution, drawn as one
  std::string name;  // "" for merged bars
};

struct RankLane {
  std::string label;  // "thread 1234 (main) d0", "GPU 0 stream 7"
  bool gpu = false;
  int64_t pid = 0, tid = 0;   // the CPU thread, or the GPU device and stream
  std::vector<RankBar> bars;  // in time order
};

struct RankLanes {
  int rank = 0;
  std::string path;
  int64_t from_ns = 0, to_ns = 0;  // its step: the CPU range, to the end of the GPU work the step launched
  std::vector<RankLane> lanes;     // CPU lanes first, then GPU lanes
};

// One collective of the step across ranks, by rank index.
struct RankJoin {
  std::string name;
  std::vector<int> lane;  // the lane of its kernel (or CPU range); -1: the rank has none in the picture
  std::vector<int64_t> arrival, end, wait_ns;
  int last = -1;  // the rank index that arrived last
};

struct RanksPicture {
  std::string step;                  // the step's name ("whole trace" without steps)
  int64_t from_ns = 0, to_ns = 0;    // the union of the ranks' windows
  std::vector<RankLanes> ranks;      // by rank
  std::vector<RankFigures> figures;  // by rank: what `ranks` prints
  std::vector<RankJoin> joins;       // the step's matched collectives, in time order
  int straggler = -1;                // rank index, -1: nobody waited
  int64_t straggler_caused_ns = 0;   // the others' waits for it, summed
  int unmatched = 0;                 // collectives of the step some ranks' traces do not hold
};

// Reads the folder (a single file is one rank) and draws `step` ("3" or "ProfilerStep#3"; "" the last step every rank
// has). `resolution_ns` > 0: consecutive bars of one kind, each shorter than it and less than it apart, are merged
// (a picture of a 128 MB trace stays small); 0: the step's span / 4000. Each trace's events are dropped once its lanes
// are made. Throws TraceError for a step no rank has, naming the steps there are.
RanksPicture ranks_picture(const std::string& path, const std::string& step, uint64_t max_json_bytes,
                           int64_t resolution_ns = 0, int threads = 0);

}  // namespace ladder
