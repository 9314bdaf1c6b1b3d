// See kernels_view.h.
#include "trace/renderers/kernels_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/text/text.h"

namespace ladder {

namespace {

// The footnotes: why a row has no GB/s or TFLOP/s (KernelWhy, in its order).
const char* const kWhyText[kWhyCount] = {
    "no op launched it (no \"External id\" or correlation ties it to a cpu_op)",
    "its op has no \"Input Dims\" (recorded without record_shapes=True)",
    "no formula for its op and shapes (trace/analyses/work.h knows mm, addmm, matmul, linear, add, mul, gelu)",
    "its op launched more than one kernel: the op's work does not say how it splits between them",
    "a copy or set whose \"bytes\" the trace does not hold",
    "a copy or set: its own bytes per second; no % (a host copy is bound by the link, not the GPU's memory)",
    "an elementwise op: bytes, no FLOPs",
    "TFLOP/s from the \"flops\" torch recorded for its op (with_flops=True), where its Input Dims give none",
};

using Row = KernelRow;

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

// The figures of a row, as text ("" = not derivable).
struct Cells {
  std::string gbps, gbps_pct, tflops, tflops_pct;
};

// The TFLOP/s a row is rated against: tensor-core kernels against the tensor-core peak, the others against the CUDA
// cores' FP32 peak where the peak has one apart.
double tflops_peak(const Peak& peak, const Row& r) {
  return !r.tensor_cores && peak.fp32_tflops > 0 ? peak.fp32_tflops : peak.tflops;
}

Cells cells(const Peak& peak, const Row& r) {
  Cells c;
  if (r.rated == 0 && r.rec_calls > 0) {  // the recorded FLOPs alone: a TFLOP/s, no GB/s
    const double tflops = r.rec_flops / (static_cast<double>(r.rec_ns) * 1e-9) / 1e12;
    c.tflops = fixed(tflops, 2);
    if (tflops_peak(peak, r) > 0) c.tflops_pct = fixed(100 * tflops / tflops_peak(peak, r), 1);
    return c;
  }
  if (r.rated == 0) return c;
  const double s = static_cast<double>(r.rated_ns) * 1e-9;
  const double gbps = r.bytes / s / 1e9, tflops = r.flops / s / 1e12;
  c.gbps = gbps >= 10 || gbps == 0 ? fixed(gbps, 0) : fmt::format("{:.2g}", gbps);
  if (peak.gbps > 0 && !r.copy) c.gbps_pct = fixed(100 * gbps / peak.gbps, 1);
  if (r.flops_known) {
    c.tflops = fixed(tflops, 2);
    if (tflops_peak(peak, r) > 0) c.tflops_pct = fixed(100 * tflops / tflops_peak(peak, r), 1);
  }
  return c;
}

// The footnote a row's "-" points to: the first reason one of its calls had none, or why a column is empty.
int note_of(const Row& r) {
  if (r.rated == 0) return r.why;
  if (r.copy) return static_cast<int>(kWhyCopy);
  if (!r.flops_known) return static_cast<int>(kWhyNoFlops);
  return r.rated < r.calls ? r.why : static_cast<int>(kWhyNone);
}

OutputTable kernel_records(const KernelTable& table, const Peak& peak) {
  OutputTable rec;
  rec.columns = {"name", "op", "category", "calls", "total_us", "mean_us", "gpu_pct", "bytes", "flops", "gbps",
                 "gbps_pct", "tflops", "tflops_pct", "tensor_cores", "rated_calls", "note"};
  rec.numeric = {false, false, false, true, true, true, true, true, true, true, true, true, true, false, true, false};
  const int64_t gpu_ns = table.gpu_ns;
  for (const Row& r : table.rows) {
    const Cells c = cells(peak, r);
    const int note = note_of(r);
    std::string note_text = note == kWhyNone ? (r.recorded ? kWhyText[kWhyRecorded] : "") : kWhyText[note];
    if (note != kWhyNone && (r.recorded || (r.rated == 0 && r.rec_calls)))
      note_text += std::string("; ") + kWhyText[kWhyRecorded];
    rec.rows.push_back({r.name, r.op, r.cat, std::to_string(r.calls), fmt::format("{:.3f}", r.total_ns / 1e3),
                        fmt::format("{:.3f}", r.total_ns / 1e3 / r.calls),
                        gpu_ns > 0 ? fmt::format("{:.2f}", 100.0 * r.total_ns / gpu_ns) : "",
                        r.rated ? fmt::format("{:.0f}", r.bytes) : "",
                        r.rated && r.flops_known ? fmt::format("{:.0f}", r.flops)
                        : r.rec_calls            ? fmt::format("{:.0f}", r.rec_flops)
                                                 : "",
                        c.gbps, c.gbps_pct, c.tflops, c.tflops_pct, r.copy ? "" : r.tensor_cores ? "yes" : "no",
                        std::to_string(r.rated), note_text});
  }
  return rec;
}

// Footnote marks: [1], [2], ... in the order the reasons are first needed.
struct Footnotes {
  std::vector<int> used;
  std::string mark(int why) {
    if (why == kWhyNone) return "";
    auto it = std::find(used.begin(), used.end(), why);
    if (it == used.end()) {
      used.push_back(why);
      it = used.end() - 1;
    }
    return fmt::format("[{}]", it - used.begin() + 1);
  }
};

// The peak line and the column heads.
std::string kernels_head(const KernelViewOptions& opt, size_t name_w) {
  std::string out;
  if (!opt.compact) {
    if (opt.peak.tflops > 0 || opt.peak.gbps > 0) {
      std::string tflops = opt.peak.tflops > 0 ? fmt::format("{:g} TFLOP/s", opt.peak.tflops) : "- TFLOP/s";
      if (opt.peak.tflops > 0 && opt.peak.fp32_tflops > 0) {
        tflops = fmt::format("{:g} TFLOP/s dense BF16 (TC yes), {:g} TFLOP/s FP32 on the CUDA cores (TC no)",
                             opt.peak.tflops, opt.peak.fp32_tflops);
      }
      out += fmt::format("peak: {}: {}, {} GB/s{}\n", opt.peak.gpu, tflops,
                         opt.peak.gbps > 0 ? fmt::format("{:g}", opt.peak.gbps) : "-",
                         opt.peak.source.empty() ? "" : " (" + opt.peak.source + ")");
    } else {
      out += "peak: none (the trace names no GPU of known peaks; give --peak-tflops and --peak-gbps for % columns)\n";
    }
  }
  const std::string gb_h = opt.peak.gbps > 0 ? opt.gbps_peak_label : "";
  const std::string tf_h = opt.peak.tflops > 0 ? opt.tflops_peak_label : "";
  if (opt.compact) {
    out += fmt::format("  {:<{}} {:>9} {:>9} {:>8} {:>9} {:>8}\n", "kernel (op)", name_w, "time", "GB/s",
                       opt.gbps_peak_label, "TFLOP/s", opt.tflops_peak_label);
  } else {
    out += fmt::format("  {:<{}} {:>6} {:>10} {:>9} {:>6} {:>9} {:>8} {:>9} {:>8} {:>3}\n", "kernel, copy or set (op)",
                       name_w, "calls", "total us", "mean us", "% GPU", "GB/s", gb_h, "TFLOP/s", tf_h, "TC");
  }
  return out;
}

std::string kernels_text(const KernelTable& table, const KernelViewOptions& opt) {
  const int numbers = opt.compact ? 10 + 10 + 9 + 10 + 9 : 7 + 11 + 10 + 7 + 10 + 9 + 10 + 9 + 4;
  const size_t name_w = static_cast<size_t>(std::max(30, opt.width - 2 - numbers));
  auto label = [&](const Row& r) {
    const std::string op = r.op.empty() ? (r.copy ? "" : " (?)") : " (" + printable(r.op) + ")";
    return shortened(kernel_display_name(printable(r.name)), name_w > op.size() + 8 ? name_w - op.size() : 8) + op;
  };
  auto dash = [](const std::string& s, const std::string& m) { return s.empty() ? "-" + m : s; };
  const std::string gb_h = opt.peak.gbps > 0 ? opt.gbps_peak_label : "";
  const std::string tf_h = opt.peak.tflops > 0 ? opt.tflops_peak_label : "";
  const int64_t gpu_ns = table.gpu_ns;
  Footnotes notes;
  bool partial = false;
  std::string out = kernels_head(opt, name_w);
  for (const Row& r : table.rows) {
    const Cells c = cells(opt.peak, r);
    // A partly rated row: the figure is over the calls whose work is known ("*"), the mark says why not all.
    const std::string part = r.rated > 0 && r.rated < r.calls ? "*" + notes.mark(r.why) : "";
    partial = partial || !part.empty() || (r.rated == 0 && r.rec_calls > 0 && r.rec_calls < r.calls);
    const std::string gbps = r.rated == 0 ? "-" + notes.mark(r.why) : c.gbps + part;
    const std::string tflops =
        r.rated == 0 && r.rec_calls ? c.tflops + (r.rec_calls < r.calls ? "*" : "") + notes.mark(kWhyRecorded)
        : r.rated == 0              ? "-" + notes.mark(r.why)
        : r.copy                    ? "-" + notes.mark(kWhyCopy)
        : !r.flops_known            ? "-" + notes.mark(kWhyNoFlops)
                                    : c.tflops + part + (r.recorded ? notes.mark(kWhyRecorded) : "");
    const std::string gpct = gb_h.empty() && !opt.compact ? "" : dash(c.gbps_pct, "");
    const std::string tpct = tf_h.empty() && !opt.compact ? "" : dash(c.tflops_pct, "");
    if (opt.compact) {
      out += fmt::format("  {:<{}} {:>7.1f}us {:>9} {:>8} {:>9} {:>8}\n", label(r), name_w, r.total_ns / 1e3, gbps,
                         gpct + (c.gbps_pct.empty() ? "" : "%"), tflops, tpct + (c.tflops_pct.empty() ? "" : "%"));
    } else {
      out += fmt::format("  {:<{}} {:>6} {:>10.1f} {:>9.2f} {:>5.1f}% {:>9} {:>8} {:>9} {:>8} {:>3}\n", label(r),
                         name_w, r.calls, r.total_ns / 1e3, r.total_ns / 1e3 / r.calls,
                         gpu_ns > 0 ? 100.0 * r.total_ns / gpu_ns : 0.0, gbps, gpct, tflops, tpct,
                         r.copy ? "" : r.tensor_cores ? "yes" : "no");
    }
  }
  if (!opt.compact) {
    out += fmt::format("  {} GPU activities, {:.1f} us of GPU time{}\n", table.activities, gpu_ns / 1e3,
                       table.rows.empty() ? " (the trace holds no kernel, copy or set)" : "");
  }
  if (partial) out += "  * over the calls whose work is known; the mark beside it says why the others' is not\n";
  for (size_t k = 0; k < notes.used.size(); ++k) out += fmt::format("  [{}] {}\n", k + 1, kWhyText[notes.used[k]]);
  return out;
}

}  // namespace

std::string kernels_view(const TraceIndex& index, const KernelViewOptions& opt) {
  const KernelTable table = kernel_table(index, opt.step, opt.all);
  if (opt.format == OutputFormat::Text) return kernels_text(table, opt);
  const OutputTable rec = kernel_records(table, opt.peak);
  return opt.format == OutputFormat::Csv ? to_csv(rec) : to_json(rec);
}

}  // namespace ladder
