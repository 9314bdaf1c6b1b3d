// TraceIndex: the structure of a trace, worked out once and shared by every view (the table, the per-step statistics,
// the timeline, the diff, a chapter's kernel table). Three relations carry all of it:
//  - nesting: host events on one thread (pid, tid) form a tree by time containment;
//  - linking: a GPU activity belongs to the API call whose "correlation" it shares, and to the op whose "External id"
//    it (or its launch call) carries;
//  - steps: a host event belongs to the ProfilerStep#k whose time span holds its start, on any thread of the step's
//    process (PyTorch runs backward on autograd threads: their work is the step's too); a GPU activity belongs to the
//    step of its launch call, else of its op, else to the step during which it ran.
// Building it sorts the events a few times; every question after that is answered in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

// The host events torch's key_averages() counts and nests: everything but the GPU lanes and the Python frames of
// with_stack=True (python_function, read as Cat::Other on a thread). The profiler's overhead events (Cat::Other on
// the pid -1 lane) are in, filed under the op that was running when they happened.
bool is_tree_event(const Event& e);
bool is_overhead_event(const Event& e);

class TraceIndex {
 public:
  explicit TraceIndex(const Trace& trace);  // keeps a reference: the trace must outlive the index

  const Trace& trace() const { return *trace_; }
  const Event& event(int i) const { return trace_->events[static_cast<size_t>(i)]; }

  struct Step {
    std::string name;  // "ProfilerStep#2", or "whole trace"
    int event = -1;    // the ProfilerStep range, -1 for the whole-trace window
    int64_t ts_ns = 0, end_ns = 0;
  };
  // The ProfilerStep#k ranges in time order. A trace with none (a plain `with profile():` block) gets one window over
  // the whole trace instead, and whole_trace() says so.
  const std::vector<Step>& steps() const { return steps_; }
  bool whole_trace() const { return whole_trace_; }

  int step_of(int i) const { return step_[static_cast<size_t>(i)]; }      // -1: outside every step
  int launch_of(int i) const { return launch_[static_cast<size_t>(i)]; }  // GPU activity -> its API call, or -1
  int op_of(int i) const { return op_[static_cast<size_t>(i)]; }  // GPU activity or API call -> innermost cpu_op, or -1
  int parent(int i) const { return parent_[static_cast<size_t>(i)]; }  // host events: the enclosing event, or -1
  // A profiler overhead event: the innermost range that was running when it began (it may end after it), or -1.
  int interrupted(int i) const {
    auto it = interrupted_.find(i);
    return it == interrupted_.end() ? -1 : it->second;
  }
  // The events directly nested in host event i (any order), a view into one flat array.
  struct Children {
    const int *b, *e;
    const int* begin() const { return b; }
    const int* end() const { return e; }
    size_t size() const { return static_cast<size_t>(e - b); }
  };
  Children children(int i) const {
    const int* base = child_list_.data();
    return {base + child_begin_[static_cast<size_t>(i)], base + child_begin_[static_cast<size_t>(i) + 1]};
  }
  // The tree events (is_tree_event) in time order, parents before their children (longest first at equal starts).
  const std::vector<int>& host_order() const { return host_order_; }
  // The kernels, copies and sets attributed to step k, by start time.
  const std::vector<int>& gpu_activities(int k) const { return gpu_of_step_[static_cast<size_t>(k)]; }
  // The host range (cpu_op or user_annotation) that carries External id `ext`, or -1.
  int host_with_external_id(int64_t ext) const;

 private:
  const Trace* trace_;
  bool whole_trace_ = false;
  std::vector<Step> steps_;
  std::vector<int> step_, launch_, op_, parent_, host_order_;
  std::vector<int> child_begin_, child_list_;
  std::unordered_map<int, int> interrupted_;  // overhead event -> the range it interrupted  // children of i: child_list_[child_begin_[i] .. child_begin_[i+1])
  std::vector<std::vector<int>> gpu_of_step_;
  std::unordered_map<int64_t, int> host_by_ext_;

  int step_at(int64_t t) const;  // the step whose span holds time t, or -1
};

}  // namespace ladder
