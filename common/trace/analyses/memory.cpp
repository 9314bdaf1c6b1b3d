// See memory.h. Three passes over the records: the levels in time order (per device), the ops that hold each record
// (per thread, a sweep over that thread's ops with a stack), and the blocks alive at each window's peak (per device,
// the open allocations by Addr, copied out at the peak's record).
#include "trace/analyses/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "trace/analyses/steps.h"

namespace ladder {

int64_t add_bytes(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw TraceError(fmt::format("the [memory] records' Bytes sum past {} bytes: not what an allocator records",
                                 a < 0 ? "-2^63" : "2^63"));
  }
  return sum;
}

std::string memory_device_name(int device_type, int device_id) {
  if (device_type == 0) return "CPU";
  if (device_type == 1) return fmt::format("cuda:{}", device_id);
  return fmt::format("device type {}:{}", device_type, device_id);
}

namespace {

// The plugin's is_operator_node: a cpu_op, less the ranges that wrap other ops' work.
bool is_operator(const Event& e) {
  if (e.cat != Cat::CpuOp) return false;
  const std::string_view n = e.name;
  auto starts = [&](std::string_view p) { return n.substr(0, p.size()) == p; };
  if (starts("enumerate(DataLoader)#") && n.size() >= 9 && n.substr(n.size() - 9) == ".__next__") return false;
  return !starts("enumerate(DataPipe)#") && !starts("Optimizer.") && n != "DataParallel.forward" &&
         n != "DistributedDataParallel.forward";
}

struct OpKey {
  int window, device, name;
  bool operator==(const OpKey& o) const { return window == o.window && device == o.device && name == o.name; }
};
struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    return std::hash<int64_t>()((int64_t{k.window} << 32) ^ (int64_t{k.device} << 24) ^ k.name);
  }
};

// The windows: the steps asked for, each [ts, end]; a trace without steps is one window over every record.
struct Window {
  int step;
  int64_t t0, t1;
};
constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();

std::vector<Window> memory_windows(const TraceIndex& index, int k, bool all_records) {
  std::vector<Window> windows;
  const auto& steps = index.steps();
  if (all_records) windows.push_back({-1, kMin, kMax});
  for (size_t s = 0; s < steps.size() && !all_records; ++s) {
    if (k >= 0 && static_cast<int>(s) != k) continue;
    if (index.whole_trace()) {
      windows.push_back({static_cast<int>(s), kMin, kMax});
    } else {
      windows.push_back({static_cast<int>(s), steps[s].ts_ns, steps[s].end_ns});
    }
  }
  return windows;
}

// The window of time `ts`, or -1 (steps do not overlap: the last one starting at or before ts, if it holds ts).
int window_at(const std::vector<Window>& windows, int64_t ts) {
  auto it = std::upper_bound(windows.begin(), windows.end(), ts, [](int64_t v, const Window& w) { return v < w.t0; });
  if (it == windows.begin()) return -1;
  --it;
  return ts <= it->t1 ? static_cast<int>(it - windows.begin()) : -1;
}

// 1. Time order, devices, levels.
struct Levels {
  std::vector<uint32_t> order;                // the records in time order
  std::vector<std::pair<int, int>> devices;   // (type, id): CPU (0, -1) first, then cuda:0, ...
  std::vector<uint16_t> dev;                  // per record, its device: 2 bytes a record (a 1 GB trace holds millions)
  std::vector<std::vector<uint32_t>> by_dev;  // each device's records in time order
  std::vector<int64_t> level;                 // per record: the allocated level after it
  std::vector<char> totals;                   // per device: the records carry "Total Allocated"
};

Levels memory_levels(const std::vector<MemoryRecord>& rec) {
  const size_t n = rec.size();
  Levels lv;
  std::vector<uint32_t>& order = lv.order;
  order.resize(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return rec[a].ts_ns < rec[b].ts_ns; });
  std::map<std::pair<int, int>, int> device_of_key;
  for (const MemoryRecord& m : rec) device_of_key.emplace(std::make_pair(m.device_type, m.device_id), 0);
  for (auto& [key, d] : device_of_key) {
    d = static_cast<int>(lv.devices.size());
    lv.devices.push_back(key);
  }
  const size_t nd = lv.devices.size();
  lv.dev.resize(n);
  lv.by_dev.resize(nd);
  lv.level.resize(n);
  lv.totals.assign(nd, 1);
  std::vector<int64_t> running(nd, 0);
  for (const MemoryRecord& m : rec) {
    if (m.total_allocated < 0) lv.totals[static_cast<size_t>(device_of_key[{m.device_type, m.device_id}])] = 0;
  }
  for (const uint32_t i : order) {
    const int d = device_of_key[{rec[i].device_type, rec[i].device_id}];
    lv.dev[i] = static_cast<uint16_t>(d);
    lv.by_dev[static_cast<size_t>(d)].push_back(i);
    int64_t& run = running[static_cast<size_t>(d)];
    run += rec[i].bytes;  // both within kMaxMemoryBytes: no overflow, and the level is checked against it
    if (run > kMaxMemoryBytes || run < -kMaxMemoryBytes) {
      throw TraceError(fmt::format("the [memory] records' Bytes on {} sum to {} bytes at {} us, past 2^50: not what an "
                                   "allocator records", memory_device_name(rec[i].device_type, rec[i].device_id),
                                   run, static_cast<double>(rec[i].ts_ns) / 1e3));
    }
    lv.level[i] = lv.totals[static_cast<size_t>(d)] ? rec[i].total_allocated : running[static_cast<size_t>(d)];
  }
  return lv;
}

// 2. Per window and device: the start level, the curve, the peaks, and where the allocated peak is.
struct Want {
  size_t window;  // in rep.windows
  int64_t pos;    // in by_dev[d]: the peak is the level after this record; -1 before the device's first
};

// Window w on device d, whose records there are by_dev[d][lo, hi); `peak_pos` gets where its allocated peak is.
MemoryWindow window_on_device(const std::vector<MemoryRecord>& rec, const Levels& lv, const Window& w, size_t d,
                              int64_t lo, int64_t hi, int64_t& peak_pos) {
  const auto& list = lv.by_dev[d];
  const auto& level = lv.level;
  MemoryWindow mw;
  mw.step = w.step;
  mw.device_type = lv.devices[d].first;
  mw.device_id = lv.devices[d].second;
  mw.device = memory_device_name(mw.device_type, mw.device_id);
  mw.totals = lv.totals[d] != 0;
  const MemoryRecord& first = rec[list[static_cast<size_t>(lo)]];
  const bool before = lo > 0;
  mw.start_allocated = before ? level[list[static_cast<size_t>(lo - 1)]] : level[list[0]] - first.bytes;
  const int64_t start_reserved = before ? rec[list[static_cast<size_t>(lo - 1)]].total_reserved : first.total_reserved;
  const int64_t t0 = w.t0 == kMin ? first.ts_ns : w.t0;
  mw.curve.reserve(static_cast<size_t>(hi - lo + 1));
  mw.curve.push_back({t0, mw.start_allocated, start_reserved});
  mw.peak_allocated = mw.start_allocated;
  mw.peak_ts_ns = t0;
  mw.peak_reserved = before ? start_reserved : -1;
  peak_pos = lo - 1;
  for (auto p = lo; p < hi; ++p) {
    const MemoryRecord& m = rec[list[static_cast<size_t>(p)]];
    const int64_t a = level[list[static_cast<size_t>(p)]];
    ++mw.records;
    ++(m.bytes > 0 ? mw.allocations : mw.frees);
    mw.curve.push_back({m.ts_ns, a, m.total_reserved});
    mw.peak_reserved = std::max(mw.peak_reserved, m.total_reserved);
    if (a > mw.peak_allocated) {
      mw.peak_allocated = a;
      mw.peak_ts_ns = m.ts_ns;
      peak_pos = p;
    }
  }
  mw.end_allocated = mw.curve.back().allocated;
  return mw;
}

// Every window on every device with records in it, into rep.windows; per device, where each window's peak is.
std::vector<std::vector<Want>> window_curves(const std::vector<MemoryRecord>& rec, const Levels& lv,
                                             const std::vector<Window>& windows, MemoryReport& rep) {
  std::vector<std::vector<Want>> wants(lv.devices.size());
  for (const Window& w : windows) {
    for (size_t d = 0; d < lv.devices.size(); ++d) {
      const auto& list = lv.by_dev[d];
      const auto lo = std::lower_bound(list.begin(), list.end(), w.t0,
                                       [&](uint32_t i, int64_t v) { return rec[i].ts_ns < v; }) - list.begin();
      const auto hi = std::upper_bound(list.begin(), list.end(), w.t1,
                                       [&](int64_t v, uint32_t i) { return v < rec[i].ts_ns; }) - list.begin();
      if (lo == hi) continue;
      int64_t peak_pos = 0;
      MemoryWindow mw = window_on_device(rec, lv, w, d, lo, hi, peak_pos);
      wants[d].push_back({rep.windows.size(), peak_pos});
      rep.windows.push_back(std::move(mw));
    }
  }
  return wants;
}

// 3. The op that holds each record, per thread: the thread's cpu_op and user_annotation ranges in time order (parents
// first), swept with a stack of the ranges open at the record's time.
struct Holders {
  std::vector<int> made_by;  // per record: the innermost cpu_op holding it, -1 if none
  std::unordered_map<std::string_view, int> name_id;
  std::vector<std::string_view> names;
  std::unordered_map<OpKey, OpMemory, OpKeyHash> stats;  // per window, device and operator name
};

// The record m, held by the ranges on `stack` (innermost last), counted in window w for each operator among them.
void count_record(const TraceIndex& index, const std::vector<int>& stack, const MemoryRecord& m, int w, int device,
                  Holders& h) {
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    const Event& e = index.event(*it);
    if (!is_operator(e)) continue;
    auto [nit, fresh] = h.name_id.emplace(e.name, static_cast<int>(h.names.size()));
    if (fresh) h.names.push_back(e.name);
    OpMemory& s = h.stats[OpKey{w, device, nit->second}];
    const bool self = it == stack.rbegin();
    s.increase = add_bytes(s.increase, m.bytes);
    if (self) s.self_increase = add_bytes(s.self_increase, m.bytes);
    if (m.bytes > 0) {
      ++s.allocation_count;
      s.allocation_size = add_bytes(s.allocation_size, m.bytes);
      if (self) {
        ++s.self_allocation_count;
        s.self_allocation_size = add_bytes(s.self_allocation_size, m.bytes);
      }
    }
  }
}

Holders hold_records(const TraceIndex& index, const Levels& lv, const std::vector<Window>& windows,
                     MemoryReport& rep) {
  const std::vector<MemoryRecord>& rec = index.trace().memory;
  std::unordered_map<int64_t, std::vector<uint32_t>> recs_of_tid;
  for (const uint32_t i : lv.order) recs_of_tid[rec[i].tid].push_back(i);
  std::unordered_map<int64_t, std::vector<int>> ops_of_tid;
  for (const int i : index.host_order()) {
    const Event& e = index.event(i);
    if ((e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation) && e.pid == index.trace().pid &&
        recs_of_tid.count(e.tid)) {
      ops_of_tid[e.tid].push_back(i);
    }
  }
  Holders h;
  h.made_by.assign(rec.size(), -1);
  std::vector<int> stack;
  for (const auto& [tid, recs] : recs_of_tid) {
    static const std::vector<int> kNone;
    auto found = ops_of_tid.find(tid);
    const std::vector<int>& ops = found == ops_of_tid.end() ? kNone : found->second;
    stack.clear();
    size_t next = 0;
    for (const uint32_t r : recs) {
      const int64_t ts = rec[r].ts_ns;
      for (; next < ops.size() && index.event(ops[next]).ts_ns <= ts; ++next) {
        const Event& e = index.event(ops[next]);
        while (!stack.empty() && index.event(stack.back()).end_ns() <= e.ts_ns) stack.pop_back();
        stack.push_back(ops[next]);
      }
      while (!stack.empty() && index.event(stack.back()).end_ns() <= ts) stack.pop_back();
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        if (index.event(*it).cat == Cat::CpuOp) {
          h.made_by[r] = *it;
          break;
        }
      }
      const int w = window_at(windows, ts);
      if (w < 0) continue;
      if (stack.empty() || !is_operator(index.event(stack.back()))) {
        ++rep.unattributed;
        continue;
      }
      count_record(index, stack, rec[r], w, lv.dev[r], h);
    }
  }
  return h;
}

// The per-op rows, with their calls: the operators of each name that start in the window.
void op_rows(const TraceIndex& index, const std::vector<Window>& windows, const Levels& lv, Holders& h,
             MemoryReport& rep) {
  std::unordered_map<int64_t, int64_t> calls;  // (window << 32 | name) -> operators
  if (!h.stats.empty()) {
    for (const int i : index.host_order()) {
      const Event& e = index.event(i);
      if (!is_operator(e)) continue;
      auto it = h.name_id.find(e.name);
      if (it == h.name_id.end()) continue;
      const int w = window_at(windows, e.ts_ns);
      if (w >= 0) ++calls[(int64_t{w} << 32) | it->second];
    }
  }
  for (auto& [key, s] : h.stats) {
    s.step = windows[static_cast<size_t>(key.window)].step;
    s.device = memory_device_name(lv.devices[static_cast<size_t>(key.device)].first,
                                  lv.devices[static_cast<size_t>(key.device)].second);
    s.name = std::string(h.names[static_cast<size_t>(key.name)]);
    s.calls = calls[(int64_t{key.window} << 32) | key.name];
    rep.ops.push_back(std::move(s));
  }
  std::sort(rep.ops.begin(), rep.ops.end(), [&](const OpMemory& a, const OpMemory& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.device != b.device) return a.device < b.device;  // "CPU" < "cuda:0" < "cuda:1"
    if (a.allocation_size != b.allocation_size) return a.allocation_size > b.allocation_size;
    return a.name < b.name;
  });
}

// 4. The blocks alive at each peak: per device, the open allocations by Addr, copied out after the peak's record.
void alive_at_peaks(const TraceIndex& index, const Levels& lv, std::vector<std::vector<Want>>& wants,
                    const std::vector<int>& made_by, MemoryReport& rep) {
  const std::vector<MemoryRecord>& rec = index.trace().memory;
  for (size_t d = 0; d < lv.devices.size(); ++d) {
    auto& want = wants[d];
    std::stable_sort(want.begin(), want.end(), [](const Want& a, const Want& b) { return a.pos < b.pos; });
    std::unordered_map<int64_t, uint32_t> open;
    size_t next = 0;
    auto copy_out = [&](int64_t pos) {
      for (; next < want.size() && want[next].pos == pos; ++next) {
        MemoryWindow& mw = rep.windows[want[next].window];
        for (const auto& [addr, i] : open) {
          const int op = made_by[i];
          mw.alive.push_back({addr, rec[i].bytes, rec[i].ts_ns, op >= 0 ? index.event(op).name : ""});
          mw.alive_bytes = add_bytes(mw.alive_bytes, rec[i].bytes);
        }
        std::sort(mw.alive.begin(), mw.alive.end(), [](const MemoryBlock& a, const MemoryBlock& b) {
          return a.bytes != b.bytes ? a.bytes > b.bytes : a.ts_ns < b.ts_ns;
        });
        mw.before_trace = add_bytes(mw.peak_allocated, -mw.alive_bytes);
      }
    };
    copy_out(-1);
    const auto& list = lv.by_dev[d];
    for (size_t p = 0; p < list.size() && next < want.size(); ++p) {
      const MemoryRecord& m = rec[list[p]];
      if (m.addr >= 0) {
        if (m.bytes > 0) {
          open[m.addr] = list[p];
        } else {
          open.erase(m.addr);  // no open allocation: a block from before the trace, which the peak counts apart
        }
      }
      copy_out(static_cast<int64_t>(p));
    }
  }
}

}  // namespace

MemoryReport memory_report(const TraceIndex& index, int k, bool all_records) {
  check_step_index(index, k);
  const std::vector<MemoryRecord>& rec = index.trace().memory;
  MemoryReport rep;
  rep.whole_trace = index.whole_trace() || all_records;
  rep.records = static_cast<int64_t>(rec.size());
  if (rec.empty()) return rep;
  const std::vector<Window> windows = memory_windows(index, k, all_records);
  const Levels lv = memory_levels(rec);
  std::vector<std::vector<Want>> wants = window_curves(rec, lv, windows, rep);
  Holders h = hold_records(index, lv, windows, rep);
  op_rows(index, windows, lv, h, rep);
  alive_at_peaks(index, lv, wants, h.made_by, rep);
  return rep;
}

}  // namespace ladder
