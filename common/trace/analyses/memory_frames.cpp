// See memory_frames.h.
#include "trace/analyses/memory_frames.h"

#include <string>
#include <vector>

namespace ladder {

namespace {

// An empty table of these columns, in this order.
Table with_columns(const char* name, const std::vector<std::pair<const char*, TableColumn::Type>>& cols) {
  Table t;
  t.name = name;
  for (const auto& [c, type] : cols) t.add(c, type);
  return t;
}

double us_in_step(const TraceIndex& index, int step, int64_t ts_ns) {
  return static_cast<double>(ts_ns - index.steps()[static_cast<size_t>(step)].ts_ns) / 1e3;
}

const std::string& step_name(const TraceIndex& index, int step) {
  return index.steps()[static_cast<size_t>(step)].name;
}

}  // namespace

Table memory_steps_frame(const TraceIndex& index, const MemoryReport& rep) {
  constexpr auto S = TableColumn::Text, I = TableColumn::Int, F = TableColumn::Float;
  Table t = with_columns("memory_steps", {{"step", S}, {"device", S}, {"peak_allocated", I}, {"peak_allocated_us", F},
                                          {"peak_reserved", I}, {"alive_blocks", I}, {"before_trace", I}});
  for (const MemoryWindow& w : rep.windows) {
    t.columns[0].texts.push_back(step_name(index, w.step));
    t.columns[1].texts.push_back(w.device);
    t.columns[2].ints.push_back(w.peak_allocated);
    t.columns[3].floats.push_back(us_in_step(index, w.step, w.peak_ts_ns));
    t.columns[4].ints.push_back(w.peak_reserved);
    t.columns[5].ints.push_back(static_cast<int64_t>(w.alive.size()));
    t.columns[6].ints.push_back(w.before_trace);
  }
  return t;
}

Table memory_blocks_frame(const TraceIndex& index, const MemoryReport& rep) {
  constexpr auto S = TableColumn::Text, I = TableColumn::Int, F = TableColumn::Float;
  Table t = with_columns("memory_blocks",
                         {{"step", S}, {"device", S}, {"op", S}, {"addr", I}, {"bytes", I}, {"alloc_us", F}});
  for (const MemoryWindow& w : rep.windows) {
    for (const MemoryBlock& b : w.alive) {
      t.columns[0].texts.push_back(step_name(index, w.step));
      t.columns[1].texts.push_back(w.device);
      t.columns[2].texts.push_back(b.op);
      t.columns[3].ints.push_back(b.addr);
      t.columns[4].ints.push_back(b.bytes);
      t.columns[5].floats.push_back(us_in_step(index, w.step, b.ts_ns));
    }
  }
  return t;
}

Table memory_ops_frame(const TraceIndex& index, const MemoryReport& rep) {
  constexpr auto S = TableColumn::Text, I = TableColumn::Int;
  Table t = with_columns("memory_ops", {{"step", S}, {"device", S}, {"op", S}, {"calls", I}, {"size_increase", I},
                                        {"self_size_increase", I}, {"allocation_count", I},
                                        {"self_allocation_count", I}, {"allocation_size", I},
                                        {"self_allocation_size", I}});
  for (const OpMemory& o : rep.ops) {
    t.columns[0].texts.push_back(step_name(index, o.step));
    t.columns[1].texts.push_back(o.device);
    t.columns[2].texts.push_back(o.name);
    const int64_t v[] = {o.calls, o.increase, o.self_increase, o.allocation_count, o.self_allocation_count,
                         o.allocation_size, o.self_allocation_size};
    for (size_t k = 0; k < 7; ++k) t.columns[3 + k].ints.push_back(v[k]);
  }
  return t;
}

}  // namespace ladder
