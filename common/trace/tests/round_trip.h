// What a trace keeps through our writer and reader: `written_back` (parse_trace(trace_to_json(t))) against `t`, field
// by field, for the fields the format carries for each event's category (json_write.cpp's put_args). Used by the
// round-trip test and by the fuzz target, so both hold the writer to the same promise.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "trace/model/trace.h"

namespace ladder::testing {

// "" when `back` holds the same events as `t`, else the first difference. Two things change on purpose and are
// expected here: a time before the written base time is written as the base (viewers reject negative times), and
// a GPU activity's "blocks/warps per SM" are written as floats.
inline std::string round_trip_difference(const Trace& t, const Trace& back) {
  if (back.events.size() != t.events.size())
    return fmt::format("{} events written, {} read back", t.events.size(), back.events.size());
  if (back.devices.size() != t.devices.size()) return "deviceProperties differ";
  if (back.metadata != t.metadata) return "metadata differ";
  const int64_t base = back.base_time_ns.value_or(0);
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event &a = t.events[i], &b = back.events[i];
    const auto differ = [&](const char* what, const auto& x, const auto& y) {
      return fmt::format("event {} (\"{}\"): {} {} written, {} read back", i, a.name.substr(0, 60), what, x, y);
    };
    if (a.cat != b.cat) return differ("cat", cat_name(a.cat), cat_name(b.cat));
    if (a.name != b.name) return differ("name", a.name.size(), b.name.size());
    if (a.pid != b.pid) return differ("pid", a.pid, b.pid);
    if (a.tid != b.tid && !is_gpu_activity(a.cat)) return differ("tid", a.tid, b.tid);
    if (std::max(a.ts_ns, base) != b.ts_ns) return differ("ts_ns", a.ts_ns, b.ts_ns);
    if (a.dur_ns != b.dur_ns) return differ("dur_ns", a.dur_ns, b.dur_ns);
    if (std::max<int64_t>(a.external_id, -1) != b.external_id) return differ("External id", a.external_id, b.external_id);
    if (is_gpu_activity(a.cat) || is_api_call(a.cat)) {
      if (a.correlation != b.correlation) return differ("correlation", a.correlation, b.correlation);
    }
    if (is_api_call(a.cat) && a.cbid != b.cbid) return differ("cbid", a.cbid, b.cbid);
    if (is_gpu_activity(a.cat)) {
      const GpuArgs &g = a.gpu, &h = b.gpu;
      if (g.device != h.device || g.context != h.context || g.stream != h.stream)
        return differ("device/context/stream", g.stream, h.stream);
      if (b.tid != g.stream) return differ("tid (the stream)", g.stream, b.tid);
      if (a.cat == Cat::Kernel) {
        if (g.registers_per_thread != h.registers_per_thread || g.shared_memory != h.shared_memory ||
            g.est_occupancy_pct != h.est_occupancy_pct)
          return differ("registers/shared memory/occupancy", g.registers_per_thread, h.registers_per_thread);
        auto as_float = [](double v) {
          const float f = static_cast<float>(v);
          return std::isfinite(f) ? f : 0.0f;
        };
        if (as_float(g.blocks_per_sm) != static_cast<float>(h.blocks_per_sm) ||
            as_float(g.warps_per_sm) != static_cast<float>(h.warps_per_sm))
          return differ("blocks/warps per SM", g.blocks_per_sm, h.blocks_per_sm);
        for (int k = 0; k < 3; ++k) {
          if (g.grid[k] != h.grid[k] || g.block[k] != h.block[k]) return differ("grid/block", g.grid[k], h.grid[k]);
        }
      } else if (g.bytes != h.bytes) {
        return differ("bytes", g.bytes, h.bytes);
      }
    }
    if (a.cat == Cat::CpuOp) {
      if (a.input_dims() != b.input_dims())
        return differ("Input Dims", a.input_dims().size(), b.input_dims().size());
      if (a.input_types() != b.input_types())
        return differ("Input type", a.input_types().size(), b.input_types().size());
      if (a.input_strides() != b.input_strides())
        return differ("Input Strides", a.input_strides().size(), b.input_strides().size());
    }
  }
  return "";
}

}  // namespace ladder::testing
