// See memory_view.h.
#include "trace/renderers/memory_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "trace/analyses/memory.h"
#include "trace/analyses/memory_frames.h"
#include "trace/renderers/sizes.h"
#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

// The curve as one line of block characters: `columns` equal slices of [t0, t1], each the highest level in it (a
// slice with no record keeps the level before it), scaled from the lowest level to the highest.
std::string sparkline(const std::vector<MemoryPoint>& curve, bool reserved, int64_t t0, int64_t t1, int columns) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  auto value = [&](const MemoryPoint& p) { return reserved ? p.reserved : p.allocated; };
  int64_t lo = value(curve.front()), hi = lo;
  for (const MemoryPoint& p : curve) {
    lo = std::min(lo, value(p));
    hi = std::max(hi, value(p));
  }
  const double span = static_cast<double>(std::max<int64_t>(1, t1 - t0));
  std::string out;
  int64_t now = value(curve.front());  // the level as a slice begins: the last point before it
  size_t next = 0;
  for (int c = 0; c < columns; ++c) {
    const double slice_end = static_cast<double>(t0) + span * (c + 1) / columns;
    int64_t v = now;
    for (; next < curve.size() && (c == columns - 1 || static_cast<double>(curve[next].ts_ns) < slice_end); ++next) {
      now = value(curve[next]);
      v = std::max(v, now);
    }
    const int level = hi > lo ? static_cast<int>(std::lround(7.0 * static_cast<double>(v - lo) / static_cast<double>(hi - lo))) : 0;
    out += kBlocks[std::clamp(level, 0, 7)];
  }
  return out;
}

}  // namespace

std::string memory_view(const TraceIndex& index, int k, OutputFormat format, int width) {
  const Trace& t = index.trace();
  if (t.memory.empty()) {
    throw TraceError("the trace holds no [memory] record: record it with torch.profiler.profile(profile_memory=True)");
  }
  const MemoryReport rep = memory_report(index, k);
  const auto& steps = index.steps();
  auto step_name = [&](int s) { return steps[static_cast<size_t>(s)].name; };

  if (format != OutputFormat::Text) return table_records(memory_frame(index, rep), format);

  if (rep.windows.empty()) {  // every record lies outside the steps: no window to show (the CSV is just empty)
    throw TraceError(fmt::format("{} holds no [memory] record (`ladder-trace svg --memory` draws every record)",
                                 k >= 0 ? printable(step_name(k)) : "no ProfilerStep"));
  }
  std::string out;
  std::string devices;
  for (const MemoryWindow& w : rep.windows) {
    if (devices.find(w.device) == std::string::npos) devices += (devices.empty() ? "" : ", ") + w.device;
  }
  out += fmt::format("{} [memory] records; devices: {}; {}\n", rep.records, devices,
                     rep.whole_trace ? "the trace has no ProfilerStep: one window over all of it"
                     : k >= 0        ? step_name(k)
                                     : fmt::format("{} steps", steps.size()));
  // The peaks, one line per step and device.
  out += fmt::format("  {:<18} {:<8} {:>16} {:>12} {:>16} {:>13} {:>16}\n", "step", "device", "peak allocated",
                     "at (us)", "peak reserved", "alive blocks", "before trace");
  int shown = k;  // the step whose details follow
  int64_t highest = std::numeric_limits<int64_t>::min();  // a level without totals may be negative
  for (const MemoryWindow& w : rep.windows) {
    out += fmt::format("  {:<18} {:<8} {:>16} {:>12.1f} {:>16} {:>13} {:>16}\n", shortened(printable(step_name(w.step)), 18),
                       w.device, size_text(w.peak_allocated), (w.peak_ts_ns - steps[static_cast<size_t>(w.step)].ts_ns) / 1e3,
                       w.peak_reserved >= 0 ? size_text(w.peak_reserved) : "-", w.alive.size(),
                       w.totals ? size_text(w.before_trace) : "-");
    if (k < 0 && (shown < 0 || w.peak_allocated > highest)) highest = w.peak_allocated, shown = w.step;
  }
  if (rep.whole_trace) {
    out += "  (at: us from the trace's first event)\n";
  } else {
    out += "  (at: us from the step's start; before trace: what the peak holds of blocks allocated before the trace "
           "began, which have no alloc event)\n";
  }

  // The details of one step.
  out += fmt::format("\n{}{}\n", printable(step_name(shown)),
                     k < 0 && !rep.whole_trace && steps.size() > 1 ? " (the highest peak; --step N for another step)" : "");
  const int spark = std::clamp(width - 34, 20, 120);
  for (const MemoryWindow& w : rep.windows) {
    if (w.step != shown) continue;
    const int64_t t1 = rep.whole_trace ? w.curve.back().ts_ns : steps[static_cast<size_t>(w.step)].end_ns;
    int64_t lo = w.curve.front().allocated, hi = lo;
    for (const MemoryPoint& p : w.curve) lo = std::min(lo, p.allocated), hi = std::max(hi, p.allocated);
    out += fmt::format("  {}: {} records, {} allocations, {} frees{}\n", w.device, w.records, w.allocations, w.frees,
                       w.totals ? "" : " (no \"Total Allocated\" in the trace: levels are Bytes summed from its start)");
    out += fmt::format("    allocated {} {} .. {}\n", sparkline(w.curve, false, w.curve.front().ts_ns, t1, spark),
                       size_text(lo), size_text(hi));
    if (w.peak_reserved >= 0) {
      int64_t rlo = w.peak_reserved;
      for (const MemoryPoint& p : w.curve) {
        if (p.reserved >= 0) rlo = std::min(rlo, p.reserved);
      }
      std::vector<MemoryPoint> known;
      for (const MemoryPoint& p : w.curve) {
        if (p.reserved >= 0) known.push_back(p);
      }
      if (!known.empty()) {
        out += fmt::format("    reserved  {} {} .. {}\n", sparkline(known, true, w.curve.front().ts_ns, t1, spark),
                           size_text(rlo), size_text(w.peak_reserved));
      }
    }
    out += fmt::format("    alive at the allocated peak ({}):\n", size_text(w.peak_allocated));
    const size_t show = std::min<size_t>(w.alive.size(), 12);
    for (size_t i = 0; i < show; ++i) {
      const MemoryBlock& b = w.alive[i];
      out += fmt::format("      {:>10}  {:<40} allocated at {:.1f} us\n", size_text(b.bytes),
                         b.op.empty() ? "(no op)" : shortened(printable(b.op), 40),
                         (b.ts_ns - steps[static_cast<size_t>(w.step)].ts_ns) / 1e3);
    }
    if (w.alive.size() > show) {
      int64_t rest = 0;
      for (size_t i = show; i < w.alive.size(); ++i) rest += w.alive[i].bytes;
      out += fmt::format("      {:>10}  {} more blocks\n", size_text(rest), w.alive.size() - show);
    }
    if (w.totals) {
      out += fmt::format("      {:>10}  allocated before the trace began (no alloc event)\n", size_text(w.before_trace));
    }
    // The plugin's per-op table for this device.
    bool header = false;
    const size_t name_w = static_cast<size_t>(std::max(24, width - 4 - 7 - 4 * 13 - 2 * 9));
    int rows = 0, more = 0;
    for (const OpMemory& o : rep.ops) {
      if (o.step != shown || o.device != w.device) continue;
      if (!header) {
        out += fmt::format("    {:<{}} {:>6} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12}\n", "op (Memory view)", name_w,
                           "calls", "size incr", "self incr", "allocs", "self", "alloc size", "self size");
        header = true;
      }
      if (rows++ >= 30) {
        ++more;
        continue;
      }
      out += fmt::format("    {:<{}} {:>6} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12}\n", shortened(printable(o.name), name_w),
                         name_w, o.calls, size_text(o.increase), size_text(o.self_increase), o.allocation_count,
                         o.self_allocation_count, size_text(o.allocation_size), size_text(o.self_allocation_size));
    }
    if (more) out += fmt::format("    ... {} more ops (--csv or --json for all)\n", more);
  }
  if (rep.unattributed > 0) {
    out += fmt::format("  {} records held by no operator (the Memory view leaves them out of its op table)\n",
                       rep.unattributed);
  }
  return out;
}

}  // namespace ladder
