// GPU work that overlaps on one stream. A stream runs its work in order, yet in a trace a kernel may start before the
// previous one on its stream has ended. Two causes:
//  - timestamps. Replayed from a CUDA graph, 03_fused_mlp's kernels overlap in CUPTI's timestamps on an H100: in two
//    runs of 20 replays, 26 and 24 of 120 GPU activities start 31 to 256 ns before the previous kernel ends, by
//    multiples of 32 ns give or take 1. Yet the graph orders them:
//    the captured graph has only default (full) dependency edges and no programmatic launch, and the same forward
//    launched eagerly overlaps nowhere (traces/README.md, "Why kernels overlap in a graph replay").
//  - programmatic dependent launch (PDL): a kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization
//    (or reached by a cudaGraphDependencyTypeProgrammatic edge) may really start before the previous one ends.
//
// Trace viewers expect the slices of one row to nest, and Perfetto drops a slice that partly overlaps the one before
// it on its row (import stat `slice_drop_overlapping_complete_event`). So the writer draws such a kernel on a second
// row of its stream, "stream 7 (overlapped)", with its timestamps untouched and an "overlap" arg that says by how much.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

struct Overlap {
  const Event* previous = nullptr;  // the activity on the same stream still running when `event` started
  const Event* event = nullptr;
  int64_t ns = 0;                   // previous->end_ns() - event->ts_ns, > 0
};

// Every GPU activity (kernel, copy, set) that starts before an earlier one on its (device, stream) has ended, in
// time order. The stream is the activity's `gpu.stream`, not its tid, so a trace read back from a file where such
// work sits on an overlap row is measured the same way.
std::vector<Overlap> find_overlaps(const Trace& trace);

// At most this many rows per stream (its own and 15 overlap rows). A real trace needs two (a replayed kernel starts a
// little before the previous one ends); thousands of activities running at once on one stream only come from broken
// timestamps or a hostile file, and thousands of lanes would help no one.
constexpr int kMaxOverlapRows = 16;

// The row each GPU activity is drawn on: 0 (the stream's own) for all but the overlapping ones, which go to the
// first row whose previous slice has ended, so that every row nests strictly. Activities not in the map are on row 0.
// When all kMaxOverlapRows rows of a stream are busy, the activity goes on the last row (kMaxOverlapRows - 1), where
// it overlaps a slice (a viewer may drop one of the two); its timestamps stay as they are. O(n log n).
std::map<const Event*, int> overlap_rows(const Trace& trace);

// The tid of row `row` of a stream: the stream itself for row 0, then stream + row * 1000000 ("stream 7" is tid 7,
// "stream 7 (overlapped)" tid 1000007): far above any stream id CUDA hands out in one process, and readable.
int64_t overlap_row_tid(int64_t stream, int row);

// The "overlap" arg the writer gives the overlapping activity, e.g. "starts 32 ns before nvjet_sm90_... on stream 7
// ends; both replayed from a CUDA graph: CUPTI's timestamps, not concurrency, since the graph orders them".
std::string overlap_arg(const Trace& trace, const Overlap& o);
// The same for every overlap of the trace, by event: what the writer uses.
std::map<const Event*, std::string> overlap_args(const Trace& trace);

// One line for a chapter to print when kernels overlapped, "" when none did, e.g. "note: 3 of 18 GPU activities
// start 32 to 224 ns before the previous one on their stream ends (in a graph replay: CUPTI's timestamps, not
// concurrency, since the graph orders them); Perfetto shows them on the row "stream 7 (overlapped)"". When one
// of them overlaps only an activity that was moved to the overlap row, it stays on its own row, and the note says how
// many are on which.
std::string overlap_note(const Trace& trace);

}  // namespace ladder
