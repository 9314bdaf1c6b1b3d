// Writing traces in the format PyTorch's profiler (Kineto) writes, so that one of our traces and one from
// torch.profiler open side by side in Perfetto and read back into the same `Trace`.
//
// Five details matter more than they look:
//  - Time. Viewers read `ts` as a double of microseconds. An absolute epoch time (~1.8e15 us) keeps only a quarter of
//    a microsecond of precision, so Kineto writes times relative to `baseTimeNanoseconds` and prints integer
//    nanoseconds as "us.nnn". Kineto's base is the time floored to 3 months, which leaves ts up to 7.9e12 us, where
//    a double's step is 0.98 ns: Perfetto then reads some times 1 ns off, and of two kernels of a graph replay that
//    touch exactly (one ends the ns the next starts, common there) it made the first overlap the second and dropped
//    one. Our base is the first event's time floored to a whole second: ts stay below 1e10 us for any run shorter
//    than 2.7 hours, where a double's step is 0.002 ns, so every reader gets every ns back.
//  - Names. Demangled kernel names hold quotes and backslashes (`void k<"a\b">`); one unescaped quote makes the whole
//    file unreadable, so every string goes through put_escaped. Names also come from files and from users' ranges, in
//    any encoding: JSON is UTF-8, and a strict reader (ours, Python's) refuses a file with one invalid byte, so
//    every byte that does not belong to a valid UTF-8 sequence is written as U+FFFD, the replacement character.
//  - Metadata. Trace::metadata values are JSON text written as they are; each is checked to be exactly one JSON
//    value first, so a bad value fails with its key instead of corrupting the whole file.
//  - Arrows. Perfetto draws a flow from the launch call to the kernel only if the "s" lies inside the launch slice on
//    the same pid/tid and the "f" (with "bp":"e") sits at the kernel's start on the GPU lane.
//  - Rows. Perfetto drops a slice that partly overlaps the one before it on its row, and a kernel replayed from a CUDA
//    graph can start a few ns before the previous one on its stream ends (overlap.h says why). Such a kernel goes on
//    a second row of its stream, "stream 7 (overlapped)", timestamps untouched, with an "overlap" arg.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "trace/model/json_tokenizer.h"
#include "trace/model/json_write.h"
#include "trace/model/overlap.h"

namespace ladder {

namespace {

using Out = fmt::memory_buffer;

// The length of the valid UTF-8 sequence that starts at s[i] (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF; the same rules the reader checks), or 0 if the byte at i starts none.
size_t utf8_length(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if (b < lo || b > hi) return 0;
    lo = 0x80, hi = 0xBF;
  }
  return n;
}

// A JSON string: quotes, backslashes and control characters escaped; valid UTF-8 sequences copied, and every other
// byte >= 0x80 written as U+FFFD (so "caf" and a Latin-1 0xe9 is written "caf" and U+FFFD, and the file stays
// readable).
void put_escaped(Out& out, const std::string& s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        out.append(std::string_view("\xEF\xBF\xBD"));  // U+FFFD
      } else {
        out.append(s.data() + i, s.data() + i + n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      case '\b':
        out.append(std::string_view("\\b"));
        break;
      case '\f':
        out.append(std::string_view("\\f"));
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

// Integer nanoseconds as microseconds with exactly three decimals ("1234.005"). Negative values (a few ns before
// the base after clock adjustments) are clamped to 0, as Kineto does: viewers reject negative times.
void put_us(Out& out, int64_t ns) {
  if (ns < 0) ns = 0;
  fmt::format_to(std::back_inserter(out), "{}.{:03d}", ns / 1000, static_cast<int>(ns % 1000));
}

// A double that is always valid JSON (NaN and Inf are not): shortest round-trip form of the float value, which is
// also how Kineto prints "blocks per SM" (0.969697).
void put_float(Out& out, double v) {
  // Checked after the cast: a finite double past float's range (1e300) becomes inf, which JSON cannot hold.
  float f = static_cast<float>(v);
  if (!std::isfinite(f)) f = 0;
  fmt::format_to(std::back_inserter(out), "{}", f);
}

void put_int_list(Out& out, const std::vector<int64_t>& v) {
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) fmt::format_to(std::back_inserter(out), "{}{}", i ? ", " : "", v[i]);
  out.push_back(']');
}

std::string escaped(const std::string& s) {
  Out o;
  put_escaped(o, s);
  return fmt::to_string(o);
}

// The base time: the capture time floored to a whole second (see "Time" above; Kineto floors to 3 months, 7889238 s,
// which costs ns precision). A trace read from a file keeps the base it had.
int64_t base_time_ns(int64_t t_ns) {
  constexpr int64_t kPeriodNs = 1000000000;
  if (t_ns <= 0) return 0;
  return t_ns / kPeriodNs * kPeriodNs;
}

// The time every metadata event is stamped with, and the base: the window start, or the first event.
int64_t first_time_ns(const Trace& trace) {
  if (trace.window_start_ns) return *trace.window_start_ns;
  std::optional<int64_t> first;
  for (const Event& e : trace.events) {
    if (!first || e.ts_ns < *first) first = e.ts_ns;
  }
  return first.value_or(0);  // no event at all: the base time stamps nothing
}


// Writes one "args" object: the keys torch.profiler writes for this category, in its order, then our "overlap" (an
// activity drawn on an overlap row) if any. `range_stream` >= 0: a GPU user range drawn on an overlap row, which gets
// its stream as an arg (as the activities carry theirs), so a reader puts it back on the stream.
void put_args(Out& out, const Event& e, const std::string& overlap, int64_t range_stream) {
  auto it = std::back_inserter(out);
  std::vector<std::string> parts;  // each already formatted "key": value
  auto add = [&](const char* key, const std::string& value) { parts.push_back(fmt::format("\"{}\": {}", key, value)); };
  const GpuArgs& g = e.gpu;
  switch (e.cat) {
    case Cat::Kernel: {
      if (e.external_id >= 0) add("External id", std::to_string(e.external_id));
      add("queued", "0");
      add("device", std::to_string(g.device));
      add("context", std::to_string(g.context));
      add("stream", std::to_string(g.stream));
      add("correlation", std::to_string(e.correlation));
      add("registers per thread", std::to_string(g.registers_per_thread));
      add("shared memory", std::to_string(g.shared_memory));
      Out f;
      put_float(f, g.blocks_per_sm);
      add("blocks per SM", fmt::to_string(f));
      f.clear();
      put_float(f, g.warps_per_sm);
      add("warps per SM", fmt::to_string(f));
      add("grid", fmt::format("[{}, {}, {}]", g.grid[0], g.grid[1], g.grid[2]));
      add("block", fmt::format("[{}, {}, {}]", g.block[0], g.block[1], g.block[2]));
      add("est. achieved occupancy %", std::to_string(g.est_occupancy_pct));
      break;
    }
    case Cat::GpuMemcpy:
    case Cat::GpuMemset: {
      if (e.external_id >= 0) add("External id", std::to_string(e.external_id));
      add("device", std::to_string(g.device));
      add("context", std::to_string(g.context));
      add("stream", std::to_string(g.stream));
      add("correlation", std::to_string(e.correlation));
      add("bytes", std::to_string(g.bytes));
      Out f;
      put_float(f, e.dur_ns > 0 ? static_cast<double>(g.bytes) / static_cast<double>(e.dur_ns) : 0.0);
      add("memory bandwidth (GB/s)", fmt::to_string(f));  // bytes per ns = GB/s
      break;
    }
    case Cat::CudaRuntime:
    case Cat::CudaDriver:
      if (e.external_id >= 0) add("External id", std::to_string(e.external_id));
      add("cbid", std::to_string(e.cbid));
      add("correlation", std::to_string(e.correlation));
      break;
    case Cat::CpuOp: {
      if (e.external_id >= 0) add("External id", std::to_string(e.external_id));
      auto strings = [](const std::vector<std::string>& v) {
        Out f;
        f.push_back('[');
        for (size_t i = 0; i < v.size(); ++i) {
          if (i) f.append(std::string_view(", "));
          put_escaped(f, v[i]);
        }
        f.push_back(']');
        return fmt::to_string(f);
      };
      if (!e.input_concrete().empty()) add("Concrete Inputs", strings(e.input_concrete()));
      if (!e.input_types().empty()) add("Input type", strings(e.input_types()));
      auto list_of_lists = [](const std::vector<std::vector<int64_t>>& v) {
        Out f;
        f.push_back('[');
        for (size_t i = 0; i < v.size(); ++i) {
          if (i) f.append(std::string_view(", "));
          put_int_list(f, v[i]);
        }
        f.push_back(']');
        return fmt::to_string(f);
      };
      if (!e.input_strides().empty()) add("Input Strides", list_of_lists(e.input_strides()));
      if (!e.input_dims().empty()) add("Input Dims", list_of_lists(e.input_dims()));
      break;
    }
    default:  // user_annotation, gpu_user_annotation, anything read from another file
      if (e.external_id >= 0) add("External id", std::to_string(e.external_id));
      if (range_stream >= 0) add("stream", std::to_string(range_stream));
      break;
  }
  if (e.extra_args) {
    for (const auto& [key, json_value] : *e.extra_args) {
      // JSON text written as it is, so checked like the metadata's: one bad value would make the whole file unreadable.
      if (!json::is_one_json_value(json_value))
        throw TraceError(
            fmt::format("event {} arg {}: the value is not one JSON value", escaped(e.name), escaped(key)));
      parts.push_back(escaped(key) + ": " + json_value);
    }
  }
  if (!overlap.empty()) add("overlap", escaped(overlap));
  out.append(std::string_view("\"args\": {"));
  for (size_t i = 0; i < parts.size(); ++i) fmt::format_to(it, "{}{}", i ? ", " : "", parts[i]);
  out.push_back('}');
}

void put_x(Out& out, const Event& e, int64_t tid, int64_t base, const std::string& overlap) {
  out.append(std::string_view("    {\"ph\": \"X\", \"cat\": "));
  put_escaped(out, cat_name(e.cat));
  out.append(std::string_view(", \"name\": "));
  put_escaped(out, e.name);
  fmt::format_to(std::back_inserter(out), ", \"pid\": {}, \"tid\": {}, \"ts\": ", e.pid, tid);
  put_us(out, e.ts_ns - base);
  out.append(std::string_view(", \"dur\": "));
  put_us(out, e.dur_ns);
  out.append(std::string_view(", "));
  put_args(out, e, overlap, e.cat == Cat::GpuUserAnnotation && tid != e.tid ? e.tid : -1);
  out.push_back('}');
}

// One ac2g flow end. "s" sits on the launch call's lane at its start; "f" with "bp":"e" binds to the enclosing
// slice (the kernel) on the GPU lane. Both share id, cat and name, which is how viewers pair them.
void put_flow(Out& out, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts) {
  fmt::format_to(std::back_inserter(out), "    {{\"ph\": \"{}\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": ", ph,
                 id, pid, tid);
  put_us(out, ts);
  out.append(std::string_view(", \"cat\": \"ac2g\", \"name\": \"ac2g\""));
  if (ph == 'f') out.append(std::string_view(", \"bp\": \"e\""));
  out.push_back('}');
}

void put_meta(Out& out, const char* name, int64_t pid, int64_t tid, int64_t ts, const char* key,
              const std::string& json_value) {
  fmt::format_to(std::back_inserter(out), "    {{\"name\": \"{}\", \"ph\": \"M\", \"ts\": ", name);
  put_us(out, ts);
  fmt::format_to(std::back_inserter(out), ", \"pid\": {}, \"tid\": {}, \"args\": {{\"{}\": {}}}}}", pid, tid, key,
                 json_value);
}

// Writes ",\n" between the events of traceEvents.
struct Separator {
  Out& out;
  bool first = true;
  void operator()() {
    if (!first) out.append(std::string_view(",\n"));
    first = false;
  }
};

// The top level before traceEvents, in Kineto's order: schemaVersion, deviceProperties, the metadata, the time base.
void put_top(Out& out, const Trace& trace, int64_t base) {
  auto it = std::back_inserter(out);
  out.append(std::string_view("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ["));
  for (size_t i = 0; i < trace.devices.size(); ++i) {
    const DeviceProps& d = trace.devices[i];
    fmt::format_to(
        it,
        "{}\n    {{\"id\": {}, \"name\": {}, \"totalGlobalMem\": {}, \"computeMajor\": {}, "
        "\"computeMinor\": {}, \"maxThreadsPerBlock\": {}, \"maxThreadsPerMultiprocessor\": {}, "
        "\"regsPerBlock\": {}, \"warpSize\": {}, \"sharedMemPerBlock\": {}, \"numSms\": {}, "
        "\"regsPerMultiprocessor\": {}, \"sharedMemPerBlockOptin\": {}, \"sharedMemPerMultiprocessor\": {}}}",
        i ? "," : "", d.id, escaped(d.name), d.total_global_mem, d.compute_major, d.compute_minor,
        d.max_threads_per_block, d.max_threads_per_sm, d.regs_per_block, d.warp_size, d.shared_mem_per_block, d.num_sms,
        d.regs_per_sm, d.shared_mem_per_block_optin, d.shared_mem_per_sm);
  }
  out.append(std::string_view(trace.devices.empty() ? "],\n" : "\n  ],\n"));
  for (const auto& [key, value] : trace.metadata) {
    // Values are JSON text already, written as they are: one that is not exactly one JSON value would corrupt the
    // file (and every reader of it), so it fails here, naming its key.
    if (!json::is_one_json_value(value)) {
      throw TraceError(fmt::format("trace metadata {}: the value is not one JSON value ({} bytes: {}{})", escaped(key),
                                   value.size(), escaped(value.substr(0, 40)), value.size() > 40 ? "..." : ""));
    }
    fmt::format_to(it, "  {}: {},\n", escaped(key), value);
  }
  fmt::format_to(it, "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {},\n  \"traceEvents\": [\n", base);
}

// The row (tid) of every GPU activity: its stream's, or an overlap row of that stream (overlap.h). A GPU user range
// (its tid is its stream) goes on the row of the activities it spans when they all sit on one: an all-reduce whose
// kernel starts before the previous one ends (NCCL's symmetric kernels launch early) keeps its range around it.
struct GpuRows {
  explicit GpuRows(const Trace& trace) : rows(overlap_rows(trace)), overlap_text(overlap_args(trace)) {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, const Event*>>> starts;  // by (pid, stream)
    for (const Event& e : trace.events)
      if (is_gpu_activity(e.cat)) starts[{e.pid, e.gpu.stream}].push_back({e.ts_ns, &e});
    for (auto& [stream, v] : starts) std::sort(v.begin(), v.end());
    for (const Event& e : trace.events) {
      if (e.cat != Cat::GpuUserAnnotation) continue;
      const auto v = starts.find({e.pid, e.tid});
      if (v == starts.end()) continue;
      // The activities inside the range, until one on the stream's own row (then the range stays there) or on a
      // second overlap row; a few dozen looked at at most, so a hostile file cannot make this quadratic.
      int row = -1, looked = 0;
      const auto from = std::make_pair(e.ts_ns, static_cast<const Event*>(nullptr));
      for (auto it = std::lower_bound(v->second.begin(), v->second.end(), from);
           it != v->second.end() && it->first <= e.end_ns() && looked++ < 64; ++it) {
        if (it->second->end_ns() > e.end_ns()) continue;  // not inside the range
        const auto r = rows.find(it->second);
        const int here = r == rows.end() ? 0 : r->second;
        if (here == 0 || (row > 0 && here != row)) {
          row = -1;
          break;
        }
        row = here;
      }
      if (row > 0 && looked <= 64) range_rows[&e] = overlap_row_tid(e.tid, row);  // (past the cap: left where it is)
    }
  }
  const std::map<const Event*, int> rows;
  const std::map<const Event*, std::string> overlap_text;
  std::map<const Event*, int64_t> range_rows;  // GPU user ranges drawn on an overlap row
  int64_t tid_of(const Event& e) const {
    if (!is_gpu_activity(e.cat)) {
      const auto r = range_rows.find(&e);
      return r == range_rows.end() ? e.tid : r->second;
    }
    const auto r = rows.find(&e);
    return overlap_row_tid(e.gpu.stream, r == rows.end() ? 0 : r->second);
  }
  std::string overlap_of(const Event& e) const {
    const auto a = overlap_text.find(&e);
    return a == overlap_text.end() ? std::string() : a->second;
  }
};

// X events, each flow right after the slice it belongs to. A launch gets an "s" only if some GPU activity in this
// trace carries its correlation id; that activity (the first, if a launch started several) gets the "f". Ids stay
// unique, so no viewer sees a duplicate flow.
void put_events(Out& out, const Trace& trace, int64_t base, const GpuRows& lanes, Separator& sep) {
  std::map<int64_t, const Event*> launch_by_corr;
  for (const Event& e : trace.events) {
    if (is_api_call(e.cat) && e.correlation >= 0) launch_by_corr.emplace(e.correlation, &e);
  }
  std::map<int64_t, const Event*> first_gpu_by_corr;
  for (const Event& e : trace.events) {
    if (is_gpu_activity(e.cat) && e.correlation >= 0 && launch_by_corr.count(e.correlation)) {
      auto [pos, inserted] = first_gpu_by_corr.emplace(e.correlation, &e);
      if (!inserted && e.ts_ns < pos->second->ts_ns) pos->second = &e;
    }
  }
  for (const Event& e : trace.events) {
    sep();
    put_x(out, e, lanes.tid_of(e), base, lanes.overlap_of(e));
    if (is_api_call(e.cat) && first_gpu_by_corr.count(e.correlation) && launch_by_corr.at(e.correlation) == &e) {
      sep();
      put_flow(out, 's', e.correlation, e.pid, e.tid, e.ts_ns - base);
    }
    if (is_gpu_activity(e.cat)) {
      auto f = first_gpu_by_corr.find(e.correlation);
      if (f != first_gpu_by_corr.end() && f->second == &e) {
        sep();
        put_flow(out, 'f', e.correlation, e.pid, lanes.tid_of(e), e.ts_ns - base);
      }
    }
  }
}

// [memory] instants: the allocator's records (profile_memory=True), with torch's fields.
void put_memory(Out& out, const Trace& trace, int64_t base, Separator& sep) {
  auto it = std::back_inserter(out);
  for (const MemoryRecord& m : trace.memory) {
    sep();
    fmt::format_to(it,
                   "    {{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
                   "\"pid\": {}, \"tid\": {}, \"ts\": ",
                   trace.pid, m.tid);
    put_us(out, m.ts_ns - base);
    out.append(std::string_view(", \"args\": {"));
    if (m.total_reserved >= 0) fmt::format_to(it, "\"Total Reserved\": {}, ", m.total_reserved);
    if (m.total_allocated >= 0) fmt::format_to(it, "\"Total Allocated\": {}, ", m.total_allocated);
    fmt::format_to(it, "\"Bytes\": {}, \"Device Id\": {}, \"Device Type\": {}", m.bytes, m.device_id, m.device_type);
    if (m.addr >= 0) fmt::format_to(it, ", \"Addr\": {}", m.addr);
    out.append(std::string_view("}}"));
  }
}

// Metadata: process and lane names, as Kineto writes them.
void put_names(Out& out, const Trace& trace, int64_t base, const GpuRows& lanes, Separator& sep) {
  const int64_t meta_ts = first_time_ns(trace) - base;
  const std::string pname = escaped(trace.process_name);
  std::set<int64_t> cpu_pids, gpu_pids;
  std::set<std::pair<int64_t, int64_t>> cpu_threads;
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int>> gpu_rows;  // (device, tid) -> (stream, row)
  for (const auto& [e, row] : lanes.rows) gpu_rows[{e->pid, lanes.tid_of(*e)}] = {e->gpu.stream, row};
  if (trace.pid != 0) cpu_pids.insert(trace.pid);
  for (const Event& e : trace.events) {
    if (is_gpu_cat(e.cat)) {
      gpu_pids.insert(e.pid);
      const int64_t tid = lanes.tid_of(e);
      if (!gpu_rows.count({e.pid, tid})) gpu_rows[{e.pid, tid}] = {tid, 0};
    } else {
      cpu_pids.insert(e.pid);
      cpu_threads.insert({e.pid, e.tid});
    }
  }
  for (int64_t pid : cpu_pids) {
    sep();
    put_meta(out, "process_name", pid, 0, meta_ts, "name", pname);
    sep();
    put_meta(out, "process_labels", pid, 0, meta_ts, "labels", "\"CPU\"");
    sep();
    put_meta(out, "process_sort_index", pid, 0, meta_ts, "sort_index", std::to_string(pid));
  }
  for (int64_t dev : gpu_pids) {
    sep();
    put_meta(out, "process_name", dev, 0, meta_ts, "name", pname);
    sep();
    put_meta(out, "process_labels", dev, 0, meta_ts, "labels", fmt::format("\"GPU {}\"", dev));
    sep();
    // Kineto sorts GPUs after every CPU process: 5000000 + device index.
    put_meta(out, "process_sort_index", dev, 0, meta_ts, "sort_index", std::to_string(5000000 + dev));
  }
  for (const auto& [lane, stream_row] : gpu_rows) {
    const auto& [dev, tid] = lane;
    const auto& [stream, row] = stream_row;
    // The trailing space is Kineto's: "stream {} {}" with an empty suffix. An overlap row sorts right after its stream.
    const std::string name = row == 0   ? fmt::format("stream {} ", stream)
                             : row == 1 ? fmt::format("stream {} (overlapped)", stream)
                                        : fmt::format("stream {} (overlapped {})", stream, row);
    sep();
    put_meta(out, "thread_name", dev, tid, meta_ts, "name", escaped(name));
    sep();
    put_meta(out, "thread_sort_index", dev, tid, meta_ts, "sort_index", std::to_string(stream));
  }
  for (const auto& [pid, tid] : cpu_threads) {
    sep();
    put_meta(out, "thread_name", pid, tid, meta_ts, "name",
             escaped(fmt::format("thread {} ({})", tid, trace.process_name)));
    sep();
    put_meta(out, "thread_sort_index", pid, tid, meta_ts, "sort_index", std::to_string(tid));
  }
}

std::string write_json(const Trace& trace, const std::string& trace_name) {
  Out out;
  const int64_t base = written_base_time_ns(trace);
  put_top(out, trace, base);
  const GpuRows lanes(trace);
  Separator sep{out};
  put_events(out, trace, base, lanes, sep);
  put_memory(out, trace, base, sep);
  put_names(out, trace, base, lanes, sep);
  out.append(std::string_view("\n  ],\n  \"traceName\": "));
  put_escaped(out, trace_name);
  out.append(std::string_view("\n}\n"));
  return fmt::to_string(out);
}

}  // namespace

int64_t written_base_time_ns(const Trace& trace) {
  return trace.base_time_ns ? *trace.base_time_ns : base_time_ns(first_time_ns(trace));
}

std::string trace_to_json(const Trace& trace) { return write_json(trace, trace.name); }

void save_trace(const Trace& trace, const std::string& path) {
  // Kineto names a trace after its file; keep a name the caller chose.
  std::string name = trace.name;
  if (name.empty()) {
    const size_t slash = path.find_last_of('/');
    name = slash == std::string::npos ? path : path.substr(slash + 1);
  }
  const std::string text = write_json(trace, name);
  // Write beside the target and rename: rename() within one folder is atomic, so a reader (or a crash) sees either
  // the old file or the whole new one, never half a JSON.
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw TraceError("cannot write trace " + path + ": " + std::strerror(errno));
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
      const std::string why = std::strerror(errno);
      std::remove(tmp.c_str());
      throw TraceError("cannot write trace " + path + ": " + why);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw TraceError("cannot write trace " + path + ": " + why);
  }
}

}  // namespace ladder
