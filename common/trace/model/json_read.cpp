// Reading a trace file, ours or one torch.profiler wrote, back into the event model: the Kineto mapping (which
// keys hold what, deviceProperties, the events and their args) on top of the streaming tokenizer (json_tokenizer.h),
// which builds each Event straight from its object, one event's fields in memory at a time.
//
// Hostile values fail with one line that names the file, the event (index in traceEvents and name) and the field:
// times that do not fit in int64 nanoseconds, a negative dur, ints out of range, tensor shapes whose size overflows.
// Events that cannot be used (no numeric ts, no integer pid, not an object, ...) are counted per reason into
// Trace::load_note; Kineto's own bookkeeping (string pids such as "Spans", ph "M"/"s"/"f"/"i") is skipped silently.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "trace/model/input.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"
#include "trace/model/json_tokenizer.h"

namespace ladder {

namespace {

using json::Num;

// |ts|, dur and the base time stay below 2^61 ns (73 years), so base + ts + dur never overflows int64 downstream.
constexpr int64_t kMaxNs = int64_t{1} << 61;

// What one event object holds, before it becomes an Event. Reused from event to event (its strings keep capacity).
struct RawEvent {
  std::string ph, cat, name, args_name, process_group;
  bool has_ph = false, has_cat = false, has_name = false, has_args = false, has_process_group = false;
  Num pid, tid, ts, dur;
  Num external_id, correlation, cbid, device, context, stream, registers, shared_memory, blocks_per_sm, warps_per_sm,
      occupancy, bytes, mem_bytes, mem_device_type, mem_device_id, mem_addr, mem_allocated, mem_reserved, flops, seq;
  Num grid[3], block[3];
  bool has_dims = false, has_strides = false;
  std::vector<std::vector<Num>> dims, strides;
  std::vector<std::string> types, concrete;
};

// The args keys read as numbers, and where each goes (grid, block and the "Input ..." lists are read on their own).
struct ArgSlot {
  std::string_view key;
  Num RawEvent::*num;
};
constexpr ArgSlot kArgSlots[] = {
    {"External id", &RawEvent::external_id},
    {"correlation", &RawEvent::correlation},
    {"cbid", &RawEvent::cbid},
    {"device", &RawEvent::device},
    {"context", &RawEvent::context},
    {"stream", &RawEvent::stream},
    {"registers per thread", &RawEvent::registers},
    {"shared memory", &RawEvent::shared_memory},
    {"blocks per SM", &RawEvent::blocks_per_sm},
    {"warps per SM", &RawEvent::warps_per_sm},
    {"est. achieved occupancy %", &RawEvent::occupancy},
    {"bytes", &RawEvent::bytes},
    {"Bytes", &RawEvent::mem_bytes},  // a [memory] instant (profile_memory=True)
    {"Device Type", &RawEvent::mem_device_type},
    {"Device Id", &RawEvent::mem_device_id},
    {"Addr", &RawEvent::mem_addr},
    {"Total Allocated", &RawEvent::mem_allocated},
    {"Total Reserved", &RawEvent::mem_reserved},
    {"flops", &RawEvent::flops},  // an op's FLOPs, as torch's with_flops=True counts them
    {"Seq", &RawEvent::seq},      // a collective's sequence number in its process group, where torch records one
};

// Chrome trace phases other than "X" (complete events): valid, and not what the tables read. Anything else is counted.
bool known_phase(std::string_view ph) {
  static constexpr std::string_view kPhases[] = {"B", "E", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N",
                                                 "O", "D", "M", "V", "v", "R", "c", "(", ")", "T", "S", "p", "F"};
  for (std::string_view k : kPhases) {
    if (ph == k) return true;
  }
  return false;
}

// A Kineto trace, read token by token into a Trace.
class Reader : json::Tokenizer {
 public:
  Reader(json::Source& in, const std::string& name, bool gzip = false) : Tokenizer(in, name), gzip_(gzip) {}

  void reserve(size_t events) { trace_.events.reserve(events); }

  Trace read() {
    ws();
    if (in_.peek() == '[') {  // a bare array of events is a valid Chrome trace too
      read_events();
    } else if (in_.peek() == '{') {
      read_top_object();
    } else if (in_.peek() < 0) {
      fail_syntax(gzip_ ? "the gzip holds no text (an empty trace)" : "the file is empty");
    } else {
      fail_syntax(gzip_ ? "expected '{' or '[': what the gzip holds is not a JSON trace"
                        : "expected '{' or '[' (the file is neither a JSON trace nor gzip)");
    }
    ws();
    if (in_.peek() >= 0) fail_syntax("unexpected text after the end");
    if (!saw_events_) {
      throw TraceError("trace " + name_ + " has no \"traceEvents\" list: not a Chrome/Kineto trace");
    }
    return finish();
  }

 private:
  // ---- The trace's layout ---------------------------------------------------------------------------------------
  void read_top_object() {
    object([&](std::string_view key) {
      if (key == "traceEvents") {
        ws();
        if (in_.peek() != '[') {
          throw TraceError("trace " + name_ + ": \"traceEvents\" must be a list");
        }
        read_events();
      } else if (key == "traceName") {
        if (!string_value(trace_.name)) throw TraceError("trace " + name_ + ": \"traceName\" must be a string");
      } else if (key == "baseTimeNanoseconds") {
        Num n;
        scalar(n);
        if (n.kind != Num::Int || n.i < 0 || n.i > kMaxNs) {
          throw TraceError(fmt::format("trace {}: \"baseTimeNanoseconds\" must be an integer in [0, 2^61], not {}",
                                       name_, shown(n)));
        }
        trace_.base_time_ns = n.i;
      } else if (key == "deviceProperties") {
        array([&](size_t i) { read_device(i); });
      } else if (key == "schemaVersion" || key == "displayTimeUnit") {
        skip();
      } else {
        // Any other key (cupti_version, trace_id, distributedInfo, ...) is kept as compact JSON text.
        std::string text;
        ws();
        in_.record(&text);
        skip();
        in_.record(nullptr);
        trace_.metadata[std::string(key)] = std::move(text);
      }
    });
  }

  void read_device(size_t index) {
    DeviceProps p;
    std::map<std::string, Num> f;
    const bool ok = object([&](std::string_view key) {
      if (key == "name") {
        if (!string_value(p.name))
          throw TraceError(fmt::format("trace {}: deviceProperties[{}]: \"name\" must be a string", name_, index));
      } else {
        scalar(f[std::string(key)]);
      }
    });
    if (!ok) return;
    const std::string where = fmt::format("deviceProperties[{}]", index);
    auto i32 = [&](const char* key) { return f.count(key) ? to_int32(f[key], key, 0, where) : 0; };
    auto i64 = [&](const char* key) { return f.count(key) ? to_int64(f[key], key, 0, where) : 0; };
    p.id = i32("id");
    p.total_global_mem = i64("totalGlobalMem");
    p.compute_major = i32("computeMajor");
    p.compute_minor = i32("computeMinor");
    p.max_threads_per_block = i32("maxThreadsPerBlock");
    p.max_threads_per_sm = i32("maxThreadsPerMultiprocessor");
    p.regs_per_block = i32("regsPerBlock");
    p.warp_size = i32("warpSize");
    p.shared_mem_per_block = i64("sharedMemPerBlock");
    p.num_sms = i32("numSms");
    p.regs_per_sm = i32("regsPerMultiprocessor");
    p.shared_mem_per_block_optin = i64("sharedMemPerBlockOptin");
    p.shared_mem_per_sm = i64("sharedMemPerMultiprocessor");
    trace_.devices.push_back(std::move(p));
  }

  void read_events() {
    saw_events_ = true;
    array([&](size_t i) {
      index_ = i;
      ws();
      if (in_.peek() != '{') {
        skip();
        ++skipped_["not an object"];
        return;
      }
      read_event_fields();
      use_event();
    });
  }

  void read_event_fields() {
    RawEvent& r = raw_;
    r.has_ph = r.has_cat = r.has_name = r.has_args = r.has_dims = r.has_strides = r.has_process_group = false;
    r.args_name.clear();
    for (Num* n :
         {&r.pid, &r.tid, &r.ts, &r.dur, &r.grid[0], &r.grid[1], &r.grid[2], &r.block[0], &r.block[1], &r.block[2]}) {
      n->kind = Num::None;
    }
    for (const ArgSlot& s : kArgSlots) (r.*s.num).kind = Num::None;
    r.types.clear();
    r.concrete.clear();
    object([&](std::string_view key) {
      if (key == "ph") {
        r.has_ph = string_value(r.ph);
      } else if (key == "cat") {
        r.has_cat = string_value(r.cat);
        if (!r.has_cat) fail_event("\"cat\" must be a string");
      } else if (key == "name") {
        r.has_name = string_value(r.name);
        if (!r.has_name) fail_event("\"name\" must be a string");
      } else if (key == "pid") {
        scalar(r.pid);
      } else if (key == "tid") {
        scalar(r.tid);
      } else if (key == "ts") {
        scalar(r.ts);
      } else if (key == "dur") {
        scalar(r.dur);
      } else if (key == "args") {
        r.has_args = object([&](std::string_view akey) { read_arg(akey); });
      } else {
        skip();
      }
    });
  }

  void read_arg(std::string_view key) {
    RawEvent& r = raw_;
    for (const ArgSlot& s : kArgSlots) {
      if (key == s.key) return scalar(r.*s.num);
    }
    if (key == "grid" || key == "block") {
      Num* triple = key == "grid" ? r.grid : r.block;
      for (int k = 0; k < 3; ++k) triple[k].kind = Num::None;
      array([&](size_t i) {
        if (i < 3) {
          scalar(triple[i]);
        } else {
          skip();
        }
      });
    } else if (key == "Input Dims" || key == "Input Strides") {
      const bool dims = key == "Input Dims";
      auto& lists = dims ? r.dims : r.strides;
      (dims ? r.has_dims : r.has_strides) = true;
      lists.clear();
      array([&](size_t) {
        lists.emplace_back();
        array([&](size_t) {
          lists.back().emplace_back();
          scalar(lists.back().back());
        });
      });
    } else if (key == "Input type") {
      r.types.clear();
      array([&](size_t) {
        r.types.emplace_back();
        if (!string_value(r.types.back())) r.types.back().clear();
      });
    } else if (key == "Concrete Inputs") {  // what torch's FLOP count of conv2d reads (stride, padding, ...)
      r.concrete.clear();
      array([&](size_t) {
        r.concrete.emplace_back();
        if (!string_value(r.concrete.back())) r.concrete.back().clear();
      });
    } else if (key == "name") {
      if (!string_value(r.args_name)) r.args_name.clear();
    } else if (key == "Process Group Name") {  // record_param_comms and its NCCL kernel (Kineto copies the args)
      r.has_process_group = string_value(r.process_group);
    } else {
      skip();
    }
  }

  // ---- From fields to an Event ----------------------------------------------------------------------------------
  [[noreturn]] void fail_event(const std::string& what) {
    throw TraceError(fmt::format("trace {}: event {}{}: {}", name_, index_,
                                 raw_.has_name ? fmt::format(" (\"{}\")", raw_.name.substr(0, 80)) : "", what));
  }
  static std::string shown(const Num& n) {
    switch (n.kind) {
      case Num::Int:
      case Num::Float:
        return n.text;
      case Num::String:
        return "a string";
      case Num::Other:
        return "not a number";
      default:
        return "missing";
    }
  }
  // A number where an integer is wanted: a fraction is rounded (torch writes some ints as 1.0), out of range is an
  // error. Anything that is not a number gives the fallback, as before.
  int64_t to_int64(const Num& n, const char* field, int64_t fallback, const std::string& where = "") {
    if (n.kind == Num::Int) return n.i;
    if (n.kind != Num::Float) return fallback;
    if (!(std::fabs(n.d) < 9.2e18)) out_of_range(n, field, where);
    return std::llround(n.d);
  }
  int to_int32(const Num& n, const char* field, int fallback, const std::string& where = "") {
    const int64_t v = to_int64(n, field, fallback, where);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) out_of_range(n, field, where);
    return static_cast<int>(v);
  }
  [[noreturn]] void out_of_range(const Num& n, const char* field, const std::string& where) {
    const std::string what = fmt::format("\"{}\" {} is out of range", field, n.text);
    if (where.empty()) fail_event(what);
    throw TraceError(fmt::format("trace {}: {}: {}", name_, where, what));
  }
  // A [memory] byte count: within +-kMaxMemoryBytes (trace.h), as "ts" and "dur" are within range, so that the
  // levels and sums the memory views make of them stay exact and checkable.
  int64_t to_bytes(const Num& n, const char* field, int64_t fallback) {
    const int64_t v = to_int64(n, field, fallback);
    if (v > kMaxMemoryBytes || v < -kMaxMemoryBytes) out_of_range(n, field, "");
    return v;
  }
  // Microseconds -> integer nanoseconds, without the rounding error of llround(v * 1000) on large values: the whole
  // microseconds are exact in a double, and so is v - floor(v); only the fraction needs rounding.
  int64_t us_to_ns(const Num& n, const char* field) {
    if (n.kind == Num::Int) {
      if (n.i > kMaxNs / 1000 || n.i < -kMaxNs / 1000) out_of_range(n, field, "");
      return n.i * 1000;
    }
    if (!(std::fabs(n.d) <= static_cast<double>(kMaxNs / 1000))) out_of_range(n, field, "");
    const double whole = std::floor(n.d);
    return static_cast<int64_t>(whole) * 1000 + std::llround((n.d - whole) * 1000.0);
  }

  void use_event() {
    RawEvent& r = raw_;
    if (!r.has_ph) {
      ++skipped_["without a ph"];
      return;
    }
    // Kineto's bookkeeping lanes ("Spans", "Traces", "") have string pids: not part of the program. But the span
    // "PyTorch Profiler (0)" starts where torch's profiler did: the origin of torch's times (Trace::profiler_start_ns).
    if (r.pid.kind == Num::String || r.tid.kind == Num::String) {
      if (r.pid.kind == Num::String && r.pid.text == "Spans" && r.ph == "X" && r.has_name &&
          r.name.rfind("PyTorch Profiler", 0) == 0 && r.ts.is_number() && !profiler_ts_) {
        profiler_ts_ = us_to_ns(r.ts, "ts");
      }
      return;
    }
    const bool ids = r.pid.kind == Num::Int && r.tid.kind == Num::Int;
    const std::string_view ph = r.ph;
    if (ph == "M") {
      if (!ids) return;
      if (r.has_name && std::string_view(r.name) == "process_name" && !r.args_name.empty())
        process_names_[r.pid.i] = r.args_name;
      if (r.has_name && std::string_view(r.name) == "thread_name" && !r.args_name.empty())
        thread_names_[{r.pid.i, r.tid.i}] = r.args_name;  // the last one wins: torch renames its autograd threads
      if (r.ts.is_number() && !meta_ts_) meta_ts_ = us_to_ns(r.ts, "ts");
      return;
    }
    if (ph == "i" && r.has_name && std::string_view(r.name) == "[memory]" && ids && r.ts.is_number() &&
        r.mem_bytes.is_number()) {
      // An allocation (Bytes > 0) or a free (< 0) that profile_memory=True recorded: torch's memory columns.
      MemoryRecord m;
      m.ts_ns = us_to_ns(r.ts, "ts");
      m.bytes = to_bytes(r.mem_bytes, "Bytes", 0);
      m.tid = r.tid.i;
      m.device_type = to_int32(r.mem_device_type, "Device Type", 0);
      m.device_id = to_int32(r.mem_device_id, "Device Id", -1);
      m.addr = to_int64(r.mem_addr, "Addr", -1);
      m.total_allocated = to_bytes(r.mem_allocated, "Total Allocated", -1);
      m.total_reserved = to_bytes(r.mem_reserved, "Total Reserved", -1);
      trace_.memory.push_back(m);
      return;
    }
    if (ph != "X") {  // flows are derived from correlation ids, instants carry no duration
      if (!known_phase(ph)) ++skipped_["with an unknown ph"];
      return;
    }
    if (!ids) {
      ++skipped_["without an integer pid and tid"];
      return;
    }
    if (!r.ts.is_number()) {
      ++skipped_["without a numeric ts"];
      return;
    }
    if (!r.dur.is_number()) {
      ++skipped_["without a numeric dur"];
      return;
    }
    Event e;
    if (!r.has_cat) r.cat.clear();
    e.cat = cat_from_name(r.cat);
    if (r.has_name) e.name = r.name;
    e.pid = r.pid.i;
    e.tid = r.tid.i;
    e.ts_ns = us_to_ns(r.ts, "ts");  // relative to baseTimeNanoseconds until finish(): that key may come later
    e.dur_ns = us_to_ns(r.dur, "dur");
    if (e.dur_ns < 0) fail_event(fmt::format("\"dur\" {} is negative", r.dur.text));
    if (!r.has_args) return trace_.events.push_back(std::move(e));
    e.external_id = to_int64(r.external_id, "External id", -1);
    e.correlation = to_int64(r.correlation, "correlation", -1);
    e.cbid = to_int32(r.cbid, "cbid", -1);
    e.flops = to_int64(r.flops, "flops", -1);
    e.seq = to_int64(r.seq, "Seq", -1);
    if (r.has_process_group) {
      auto [it, added] = process_group_index_.try_emplace(r.process_group, trace_.process_groups.size());
      if (added) trace_.process_groups.push_back(r.process_group);
      e.process_group = static_cast<int32_t>(it->second);
    }
    GpuArgs& g = e.gpu;
    const bool gpu = is_gpu_cat(e.cat);
    g.device = to_int32(r.device, "device", 0);
    if (gpu && r.device.kind != Num::Int && r.device.kind != Num::Float) g.device = to_int32(r.pid, "pid", 0);
    g.context = to_int32(r.context, "context", 0);
    g.stream = to_int32(r.stream, "stream", 0);
    if (gpu && !r.stream.is_number()) g.stream = to_int32(r.tid, "tid", 0);
    // Our writer draws work that overlaps on its stream on a second row (trace/model/overlap.h), tid 1000007 for stream
    // 7; read back, it is the stream's work again.
    if (gpu && r.stream.is_number()) e.tid = g.stream;
    g.registers_per_thread = to_int32(r.registers, "registers per thread", 0);
    g.shared_memory = to_int32(r.shared_memory, "shared memory", 0);
    g.blocks_per_sm = to_double(r.blocks_per_sm, "blocks per SM");
    g.warps_per_sm = to_double(r.warps_per_sm, "warps per SM");
    for (int k = 0; k < 3; ++k) {
      g.grid[k] = to_int32(r.grid[k], "grid", 0);
      g.block[k] = to_int32(r.block[k], "block", 0);
    }
    g.est_occupancy_pct = to_int32(r.occupancy, "est. achieved occupancy %", 0);
    g.bytes = to_int64(r.bytes, "bytes", 0);
    e.inputs = op_inputs();
    trace_.events.push_back(std::move(e));
  }
  // The event's "Input Dims", "Input type" and "Input Strides", one copy shared by every event that wrote the same
  // (see Event::inputs); null when it wrote none. Keyed by the lists as written: the numbers' text, and each type
  // after its length (a type may hold any character).
  std::shared_ptr<const OpInputs> op_inputs() {
    const RawEvent& r = raw_;
    const bool dims = r.has_dims && !r.dims.empty(), strides = r.has_strides && !r.strides.empty();
    if (!dims && !strides && r.types.empty() && r.concrete.empty()) return nullptr;
    std::string& key = inputs_key_;
    key.clear();
    for (const auto* lists : {dims ? &r.dims : nullptr, strides ? &r.strides : nullptr}) {
      for (size_t k = 0; lists && k < lists->size(); ++k) {
        for (const Num& x : (*lists)[k]) {
          if (x.is_number()) key.append(x.text).push_back(',');
        }
        key.push_back(';');
      }
      key.push_back('|');
    }
    for (const std::string& type : r.types) key.append(std::to_string(type.size())).append(":").append(type);
    key.push_back('|');
    for (const std::string& c : r.concrete) key.append(std::to_string(c.size())).append(":").append(c);
    auto seen = inputs_seen_.find(key);
    if (seen != inputs_seen_.end()) return seen->second;
    auto in = std::make_shared<OpInputs>();
    if (dims) in->dims = int_lists(r.dims, "Input Dims", true);  // checked once per distinct list: same text, same ints
    if (strides) in->strides = int_lists(r.strides, "Input Strides", false);
    in->types = r.types;
    in->concrete = r.concrete;
    return inputs_seen_.emplace(key, std::move(in)).first->second;
  }
  double to_double(const Num& n, const char* field) {
    if (!n.is_number()) return 0;
    if (!std::isfinite(n.d)) out_of_range(n, field, "");
    return n.d;
  }
  // [[1024, 32], [64, 32], []]: one list per input; entries that are not numbers are dropped. A shape's entries must
  // be >= 0 and multiply to an int64 (the tables compute numel and FLOPs from them).
  std::vector<std::vector<int64_t>> int_lists(const std::vector<std::vector<Num>>& lists, const char* field,
                                              bool shape) {
    std::vector<std::vector<int64_t>> out;
    out.reserve(lists.size());
    for (const auto& list : lists) {
      std::vector<int64_t> v;
      int64_t numel = 1;
      for (const Num& x : list) {
        if (!x.is_number()) continue;
        v.push_back(to_int64(x, field, 0));
        if (shape && (v.back() < 0 || __builtin_mul_overflow(numel, v.back(), &numel))) {
          fail_event(fmt::format("\"{}\" {} is negative or its product overflows int64", field, x.text));
        }
      }
      out.push_back(std::move(v));
    }
    return out;
  }

  Trace finish() {
    Trace& t = trace_;
    const int64_t base = t.base_time_ns.value_or(0);  // no "baseTimeNanoseconds": ts are absolute
    for (Event& e : t.events) e.ts_ns += base;
    for (MemoryRecord& m : t.memory) m.ts_ns += base;
    auto pm = t.metadata.find("profile_memory");
    t.profile_memory = !t.memory.empty() || (pm != t.metadata.end() && pm->second != "0" && pm->second != "false");
    // The CPU process is the one the host ranges live on.
    for (const Event& e : t.events) {
      if (e.cat == Cat::UserAnnotation || e.cat == Cat::CpuOp) {
        t.pid = e.pid;
        break;
      }
    }
    auto it = process_names_.find(t.pid);
    if (it != process_names_.end()) t.process_name = it->second;
    for (const auto& [lane, name] : thread_names_) {
      if (lane.first == t.pid) t.thread_names[lane.second] = name;
    }
    std::optional<int64_t> lo, hi;
    for (const Event& e : t.events) {
      if (!lo || e.ts_ns < *lo) lo = e.ts_ns;
      if (!hi || e.end_ns() > *hi) hi = e.end_ns();
    }
    t.window_start_ns = meta_ts_ ? std::optional<int64_t>(base + *meta_ts_) : lo;
    t.window_end_ns = hi;
    if (profiler_ts_) t.profiler_start_ns = base + *profiler_ts_;
    drop_copies();  // after the window: an event before the base the writer keeps is compared as written
    if (!skipped_.empty()) {
      int64_t total = 0;
      std::string reasons;
      for (const auto& [why, count] : skipped_) {
        total += count;
        reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", count, why);
      }
      const std::string events = fmt::format("{} event{}", total, total == 1 ? "" : "s");
      if (t.events.empty()) {
        throw TraceError(fmt::format("trace {} has no usable event: skipped {}: {}", name_, events, reasons));
      }
      t.load_note = fmt::format("skipped {} of {}: {}", events, name_, reasons);
    }
    return std::move(t);
  }

  // An event the file holds twice, the same in category, name, thread, start, duration and ids, is one event copied
  // (two files joined, an event list written twice): torch never writes two such events, since every op, range, call
  // and kernel it writes has an id of its own. Counted twice it would add its time twice to every table, so the copy
  // is skipped, and load_note says so. Events without an id are kept as they are: nothing says they are copies.
  // Compared are the fields as the writer writes them (json_write.h; round_trip.h lists them), so that a trace read,
  // written and read again holds the same events: a GPU activity's lane is its stream, a correlation counts only on a
  // GPU activity or an API call, and a time before the written base is the base.
  void drop_copies() {
    std::vector<Event>& events = trace_.events;
    const int64_t base = written_base_time_ns(trace_);
    using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, Cat, const std::string&>;
    const auto key = [base](const Event& e) {
      const bool gpu = is_gpu_activity(e.cat);
      return Key{std::max(e.ts_ns, base), gpu || is_api_call(e.cat) ? e.correlation : -1,
                 std::max<int64_t>(e.external_id, -1), e.pid, gpu ? e.gpu.stream : e.tid, e.dur_ns, e.cat, e.name};
    };
    // The events that carry an id, by start (plain pairs sort fast); within a run of one start, by the whole key, so
    // that copies lie next to each other and the first of each in the file comes first.
    std::vector<std::pair<int64_t, uint32_t>> order;
    for (size_t i = 0; i < events.size(); ++i)
      if (const Key k = key(events[i]); std::get<1>(k) >= 0 || std::get<2>(k) >= 0)
        order.emplace_back(std::get<0>(k), static_cast<uint32_t>(i));
    std::sort(order.begin(), order.end());
    std::vector<char> copy(events.size(), 0);
    int64_t copies = 0;
    for (size_t a = 0, b = 0; a < order.size(); a = b) {
      while (b < order.size() && order[b].first == order[a].first) ++b;
      if (b - a < 2) continue;
      std::sort(order.begin() + a, order.begin() + b, [&](const auto& x, const auto& y) {
        const Key kx = key(events[x.second]), ky = key(events[y.second]);
        return kx < ky || (kx == ky && x.second < y.second);
      });
      for (size_t j = a + 1; j < b; ++j)
        if (key(events[order[j].second]) == key(events[order[j - 1].second])) {
          copy[order[j].second] = 1;
          ++copies;
        }
    }
    if (copies == 0) return;
    size_t kept = 0;
    for (size_t i = 0; i < events.size(); ++i)
      if (!copy[i]) {
        if (kept != i) events[kept] = std::move(events[i]);
        ++kept;
      }
    events.resize(kept);
    skipped_["exact copies of another event"] += copies;
  }

  Trace trace_;
  RawEvent raw_;
  size_t index_ = 0;  // of the event being read, in traceEvents
  bool saw_events_ = false;
  std::map<std::string, int64_t> skipped_;  // reason -> events
  std::map<int64_t, std::string> process_names_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;  // (pid, tid) -> name
  std::optional<int64_t> profiler_ts_;                               // the "PyTorch Profiler (0)" span's ts
  std::optional<int64_t> meta_ts_;  // the first metadata event's ts: the capture window's start
  bool gzip_ = false;               // the text came out of a gzip (the messages say so)
  std::unordered_map<std::string, std::shared_ptr<const OpInputs>> inputs_seen_;  // op_inputs(): key -> the one copy
  std::string inputs_key_;                                                         // op_inputs()'s key, reused
  std::unordered_map<std::string, size_t> process_group_index_;  // name -> index in trace_.process_groups
};

}  // namespace

Trace parse_trace(std::string_view text, const std::string& name) {
  json::Source in(text);
  return Reader(in, name).read();
}

Trace load_trace(const std::string& path, uint64_t max_json_bytes) {
  TraceInput input(path, max_json_bytes);
  Reader reader(input.source(), path, input.gzip());
  // An Event is ~250 bytes, a Kineto X event 300-500 bytes of JSON. Reserving one event per 128 bytes of text costs
  // address space only (pages never written are never resident) and spares the copy that doubling a vector of a
  // 1 GB trace's events would make (1.5x its memory at the peak). Past that estimate the vector grows as usual.
  if (input.expected_bytes() > (64 << 20)) reader.reserve(static_cast<size_t>(input.expected_bytes() / 128));
  Trace t = reader.read();
  input.finish();
  return t;
}

}  // namespace ladder
