// See memory_frames.h.
#include "trace/analyses/memory_frames.h"

#include <array>
#include <cmath>
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

Table memory_frame(const TraceIndex& index, const MemoryReport& rep) {
  constexpr auto S = TableColumn::Text, F = TableColumn::Float;
  Table t = with_columns("memory", {{"table", S},
                                    {"step", S},
                                    {"device", S},
                                    {"op", S},
                                    {"calls", F},
                                    {"peak_allocated", F},
                                    {"peak_allocated_us", F},
                                    {"peak_reserved", F},
                                    {"before_trace", F},
                                    {"addr", F},
                                    {"bytes", F},
                                    {"alloc_us", F},
                                    {"size_increase", F},
                                    {"self_size_increase", F},
                                    {"allocation_count", F},
                                    {"self_allocation_count", F},
                                    {"allocation_size", F},
                                    {"self_allocation_size", F}});
  const double nan = std::nan("");
  // A row: its texts, then the 14 numbers from "calls" on, NaN where the kind has none.
  auto row = [&](const char* kind, const std::string& step, const std::string& device, const std::string& op,
                 const std::array<double, 14>& numbers) {
    const std::string texts[] = {kind, step, device, op};
    for (size_t c = 0; c < 4; ++c) t.columns[c].texts.push_back(texts[c]);
    for (size_t c = 0; c < 14; ++c) t.columns[4 + c].floats.push_back(numbers[c]);
  };
  auto d = [](int64_t v) { return static_cast<double>(v); };
  for (const MemoryWindow& w : rep.windows) {
    const std::string& sn = step_name(index, w.step);
    row("peak", sn, w.device, "",
        {nan, d(w.peak_allocated), us_in_step(index, w.step, w.peak_ts_ns),
         w.peak_reserved >= 0 ? d(w.peak_reserved) : nan, d(w.before_trace), nan, nan, nan, nan, nan, nan, nan, nan,
         nan});
    for (const MemoryBlock& b : w.alive) {
      row("alive", sn, w.device, b.op,
          {nan, nan, nan, nan, nan, d(b.addr), d(b.bytes), us_in_step(index, w.step, b.ts_ns), nan, nan, nan, nan, nan,
           nan});
    }
  }
  for (const OpMemory& o : rep.ops) {
    row("op", step_name(index, o.step), o.device, o.name,
        {d(o.calls), nan, nan, nan, nan, nan, nan, nan, d(o.increase), d(o.self_increase), d(o.allocation_count),
         d(o.self_allocation_count), d(o.allocation_size), d(o.self_allocation_size)});
  }
  return t;
}

}  // namespace ladder
