// What a profile_memory=True trace says about memory, per step and device: the allocated and reserved curves (the
// allocator's "Total Allocated" and "Total Reserved" after each [memory] record), their peaks, the blocks alive at the
// allocated peak with the op that made each, and per-op allocation statistics as the TensorBoard profiler plugin's
// Memory view defined them. `ladder-trace memory` prints it (memory_view.h), `ladder-trace svg --memory` draws it
// (memory_svg.h).
//
// The rules, and where they come from:
//  - Order: the records sorted by time, file order among equal times (the totals are the allocator's state, one per
//    device, whichever thread made the record).
//  - A step's window is ProfilerStep#k's span, both ends included (a record belongs to the step whose span holds its
//    time); a trace without steps is one window over all its records. The level at a window's start is the level
//    after the device's last record before it, or, when there is none, the first record's total less its Bytes.
//  - Pairs: a free (Bytes < 0) closes the open allocation of the same Addr on the same device. A free with no open
//    allocation freed a block allocated before the trace began, which has no alloc event.
//  - The op that made a block: the innermost cpu_op on the allocating thread whose [start, end) holds the record.
//  - Per-op statistics (the plugin's memory_parser.py / node.py): a record goes to the innermost cpu_op or
//    user_annotation on its thread whose [start, end) holds it, and counts only when that is an operator (a cpu_op not
//    named Optimizer.*, enumerate(DataLoader)#*.__next__, enumerate(DataPipe)#*, DataParallel.forward or
//    DistributedDataParallel.forward); self size increase = the sum of its Bytes (frees negative), self allocation
//    count and size = its allocations' count and bytes; the non-self figures add every operator nested inside,
//    and rows are by op name (calls: that name's operators in the window, by their start).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/index.h"

namespace ladder {

// a + b for sums of [memory] byte counts, or a TraceError when the sum leaves int64: each count is within
// kMaxMemoryBytes (the reader checks), but a hostile file can hold millions of them.
int64_t add_bytes(int64_t a, int64_t b);

// "CPU" for c10's device type 0, "cuda:N" for 1 (CUDA), "device type T:N" for others.
std::string memory_device_name(int device_type, int device_id);

struct MemoryBlock {
  int64_t addr = -1, bytes = 0, ts_ns = 0;
  std::string op;  // the op that made it, "" when no cpu_op held the allocation
};

struct MemoryPoint {
  int64_t ts_ns = 0, allocated = 0, reserved = -1;  // reserved -1: the trace has no totals
};

// One step's window on one device.
struct MemoryWindow {
  int step = 0;          // index in index.steps(); -1: the window over every record (all_records)
  std::string device;    // memory_device_name
  int device_type = 0, device_id = -1;
  int64_t records = 0, allocations = 0, frees = 0;
  int64_t start_allocated = 0, end_allocated = 0;
  int64_t peak_allocated = 0, peak_ts_ns = 0;
  int64_t peak_reserved = -1;  // -1: the trace has no "Total Reserved"
  // The blocks with an alloc event alive at the allocated peak, largest first, and what the peak holds beyond them:
  // blocks allocated before the trace began (peak_allocated - their sum).
  std::vector<MemoryBlock> alive;
  int64_t alive_bytes = 0, before_trace = 0;
  std::vector<MemoryPoint> curve;  // the window's start level, then the level after each record in it
  bool totals = true;  // false: no "Total Allocated" in the trace, levels are Bytes summed from the trace's start
};

struct OpMemory {
  int step = 0;
  std::string device, name;
  int64_t calls = 0;
  int64_t self_increase = 0, self_allocation_count = 0, self_allocation_size = 0;
  int64_t increase = 0, allocation_count = 0, allocation_size = 0;
};

struct MemoryReport {
  bool whole_trace = false;             // no ProfilerStep: one window over every record
  std::vector<MemoryWindow> windows;    // by step, then device (CPU first, then cuda:0, ...)
  std::vector<OpMemory> ops;            // by step, device, then allocation size, largest first
  int64_t records = 0, unattributed = 0;  // records no operator held (the plugin skips them too)
};

// The report for step k (an index in index.steps()), or for every step when k is -1. `all_records`: one window over
// every record instead, steps or not (its step is -1): the whole curve, as `ladder-trace svg --memory` draws it.
MemoryReport memory_report(const TraceIndex& index, int k = -1, bool all_records = false);

}  // namespace ladder
