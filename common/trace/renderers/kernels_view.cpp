// See kernels_view.h.
#include "trace/renderers/kernels_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

using Row = KernelRow;

std::string fixed(double v, int digits) { return std::isnan(v) ? "" : fmt::format("{:.{}f}", v, digits); }

// The figures of a row, as text ("" = not derivable).
struct Cells {
  std::string gbps, gbps_pct, tflops, tflops_pct;
};

Cells cells(const KernelRates& k) {
  Cells c;
  if (!std::isnan(k.gbps)) c.gbps = k.gbps >= 10 || k.gbps == 0 ? fixed(k.gbps, 0) : fmt::format("{:.2g}", k.gbps);
  c.gbps_pct = fixed(k.gbps_pct, 1);
  c.tflops = fixed(k.tflops, 2);
  c.tflops_pct = fixed(k.tflops_pct, 1);
  return c;
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
  size_t name_w = static_cast<size_t>(std::max(30, opt.width - 2 - numbers));
  auto label = [&](const Row& r, size_t w) {
    const std::string op = r.op.empty() ? (r.copy ? "" : " (?)") : " (" + printable(r.op) + ")";
    const std::string name = kernel_display_name(printable(r.name));
    return w == 0 ? name + op : shortened(name, w > op.size() + 8 ? w - op.size() : 8) + op;
  };
  if (opt.width <= 0) {  // names whole: the column as wide as the longest
    name_w = 30;
    for (const Row& r : table.rows) name_w = std::max(name_w, display_width(label(r, 0)));
  }
  auto dash = [](const std::string& s, const std::string& m) { return s.empty() ? "-" + m : s; };
  const std::string gb_h = opt.peak.gbps > 0 ? opt.gbps_peak_label : "";
  const std::string tf_h = opt.peak.tflops > 0 ? opt.tflops_peak_label : "";
  const int64_t gpu_ns = table.gpu_ns;
  Footnotes notes;
  bool partial = false;
  std::string out = kernels_head(opt, name_w);
  for (const Row& r : table.rows) {
    const KernelRates k = kernel_rates(r, opt.peak);
    const Cells c = cells(k);
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
    // A % of another peak than the row's own, or none because the rate is above every peak: a mark says which.
    const std::string gpct = gb_h.empty() && !opt.compact ? "" : dash(c.gbps_pct, notes.mark(k.gbps_note));
    const std::string tpct = tf_h.empty() && !opt.compact ? "" : c.tflops_pct.empty()
                                                                     ? "-" + notes.mark(k.tflops_note)
                                                                     : c.tflops_pct + notes.mark(k.tflops_note);
    if (opt.compact) {
      out += fmt::format("  {:<{}} {:>7.1f}us {:>9} {:>8} {:>9} {:>8}\n", label(r, name_w), name_w, r.total_ns / 1e3,
                         gbps, gpct + (c.gbps_pct.empty() ? "" : "%"), tflops,
                         tpct + (c.tflops_pct.empty() ? "" : "%"));
    } else {
      out += fmt::format("  {:<{}} {:>6} {:>10.1f} {:>9.2f} {:>5.1f}% {:>9} {:>8} {:>9} {:>8} {:>3}\n",
                         label(r, opt.width <= 0 ? 0 : name_w), name_w, r.calls, r.total_ns / 1e3,
                         r.total_ns / 1e3 / r.calls, gpu_ns > 0 ? 100.0 * r.total_ns / gpu_ns : 0.0, gbps, gpct,
                         tflops, tpct, r.copy ? "" : r.tensor_cores ? "yes" : "no");
    }
  }
  if (!opt.compact) {
    out += fmt::format("  {} GPU activities, {:.1f} us of GPU time{}\n", table.activities, gpu_ns / 1e3,
                       table.rows.empty() ? " (the trace holds no kernel, copy or set)" : "");
  }
  if (partial) out += "  * over the calls whose work is known; the mark beside it says why the others' is not\n";
  for (size_t k = 0; k < notes.used.size(); ++k) out += fmt::format("  [{}] {}\n", k + 1, kernel_why_text(notes.used[k]));
  return out;
}

}  // namespace

std::string kernels_view(const TraceIndex& index, const KernelViewOptions& opt) {
  const KernelTable table = kernel_table(index, opt.step, opt.all);
  if (opt.format == OutputFormat::Text) return kernels_text(table, opt);
  return table_records(kernel_frame(table, opt.peak), opt.format);
}

}  // namespace ladder
