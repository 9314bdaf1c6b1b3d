// See diff.h.
#include "trace/renderers/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "trace/analyses/diff_summary.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

std::string mb(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }
// A row's bytes: a memset of 8 bytes is "8 B", not "0.0 MB".
std::string row_bytes(double bytes) {
  return bytes >= 1e5 ? mb(bytes) : bytes >= 100 ? fmt::format("{:.1f} kB", bytes / 1e3) : fmt::format("{:.0f} B", bytes);
}

// "[gelu] void ch03::gelu_vec_kernel<2, false>(...)": the op first, since long kernel names often differ only late.
// An = row whose ops differ names both, "-" for a side without one: "[aten::mm | aten::addmm]".
// Two labels that cut to the same text are cut in the middle instead ("[aten::mm] sm90_xmma...128x256_tn"), as the
// names that share a long head differ at their end; any still alike get " #2", " #3" in the order of the rows.
std::string full_label(const std::string& name, const DiffActivity& k, const DiffActivity* other) {
  std::string op = printable(k.op);
  if (other && other->op != k.op) op = (k.op.empty() ? "-" : op) + " | " + (other->op.empty() ? "-" : printable(other->op));
  if (!op.empty()) op = "[" + op + "] ";
  return op + printable(k.cat == Cat::Kernel ? kernel_display_name(name) : name);
}

std::string middle_cut(const std::string& s, size_t width) {
  if (display_width(s) <= width) return s;
  const std::string head = shortened(s, width / 2 + 2);  // its last three characters are the "..."
  size_t tail = s.size(), cols = display_width(head);
  while (tail > 0 && cols < width) {  // whole characters from the end, while they fit
    size_t start = tail - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
    const size_t w = display_width(s.substr(start, tail - start));
    if (cols + w > width) break;
    cols += w;
    tail = start;
  }
  return head + s.substr(tail);
}

// Each row's label in `width` columns ("x3" kept when it ran more than once per step), no two rows alike.
std::vector<std::string> labels_of(const std::vector<std::string>& full, const std::vector<int64_t>& counts,
                                   size_t width) {
  std::vector<std::string> out(full.size());
  auto times = [&](size_t i) { return counts[i] > 1 ? fmt::format(" x{}", counts[i]) : std::string(); };
  auto room = [&](size_t i) { return std::max<size_t>(width > times(i).size() ? width - times(i).size() : 0, 8); };
  std::map<std::string, std::vector<size_t>> alike;
  for (size_t i = 0; i < full.size(); ++i) alike[shortened(full[i], room(i)) + times(i)].push_back(i);
  for (const auto& [text, rows] : alike) {
    for (const size_t i : rows) out[i] = rows.size() == 1 ? text : middle_cut(full[i], room(i)) + times(i);
  }
  std::map<std::string, int> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    const int k = ++seen[out[i]];
    if (k > 1) out[i] = shortened(out[i], room(i) > 4 ? room(i) - 4 : 4) + fmt::format(" #{}", k);
  }
  return out;
}

// "(-2.3%)", or new/gone where one side is zero: a percentage of nothing says nothing.
std::string change(double a, double b) {
  if (a == 0 && b == 0) return "";
  if (a == 0) return "  (new)";
  if (b == 0) return "  (gone)";
  return fmt::format("  ({:+.1f}%)", 100.0 * (b - a) / a);
}

// Why the bytes moved are not derivable, naming the trace that lacks what: "" when they are.
std::string why_no_bytes(const DiffSummary& sa, const DiffSummary& sb, const std::string& name_a,
                         const std::string& name_b) {
  std::string why;
  if (sa.no_shapes || sb.no_shapes) {
    why = sa.no_shapes && sb.no_shapes ? name_a + " and " + name_b + " were" : (sa.no_shapes ? name_a : name_b) + " was";
    why += " recorded without input shapes (torch.profiler's record_shapes=True)";
  }
  for (const auto* t : {&sa, &sb}) {
    if (!t->no_bytes.empty()) why += (why.empty() ? "" : "; ") + t->no_bytes;
  }
  return why;
}

std::string text(const DiffSummary& sa, const DiffSummary& sb, const std::string& name_a,
                 const std::string& name_b, size_t w) {
  std::string out;
  for (const auto* t : {&sa, &sb}) {
    if (t->whole_trace) {
      out += fmt::format("{} has no ProfilerStep: its whole trace is one window, compared as one step\n",
                         t == &sa ? name_a : name_b);
    }
  }
  if (!sa.step_name.empty()) {
    out += fmt::format("{} of {} and of {}\n", printable(sa.step_name), name_a, name_b);
  } else {
    out += fmt::format("per step, mean over {} steps of {} and {} of {}\n", sa.steps, name_a, sb.steps, name_b);
  }
  const std::vector<DiffRow> rows = diff_rows(sa, sb);
  std::vector<std::string> full;
  std::vector<int64_t> counts;
  for (const DiffRow& r : rows) {
    const DiffActivity& k = r.a ? *r.a : *r.b;
    full.push_back(full_label(*r.name, k, r.change == DiffChange::Both ? r.b : nullptr));
    counts.push_back(static_cast<int64_t>(k.count));
  }
  const std::vector<std::string> shown = labels_of(full, counts, w);
  for (size_t i = 0; i < rows.size(); ++i) {
    const DiffRow& r = rows[i];
    if (r.change == DiffChange::Both) {
      out += fmt::format("  = {:<{}} {:>9.1f} us -> {:>9.1f} us{}\n", shown[i], w, r.a->us,
                         r.b->us, r.a->count != r.b->count ? fmt::format("  ({}x -> {}x)", r.a->count, r.b->count) : "");
    } else {
      const DiffActivity& k = r.a ? *r.a : *r.b;
      out += fmt::format("  {} {:<{}} {:>9.1f} us{}\n", r.a ? '-' : '+', shown[i], w, k.us,
                         k.bytes_known ? "  " + row_bytes(k.bytes) : "");
    }
  }
  out += fmt::format("  kernels per step    {:>9.0f}    -> {:>9.0f}\n", sa.kernels, sb.kernels);
  if (sa.copies > 0 || sb.copies > 0) {
    out += fmt::format("  copies+sets/step    {:>9.0f}    -> {:>9.0f}\n", sa.copies, sb.copies);
  }
  out += fmt::format("  GPU busy per step   {:>9.1f} us -> {:>9.1f} us{}\n", sa.busy_us, sb.busy_us,
                     change(sa.busy_us, sb.busy_us));
  out += fmt::format("  step wall time      {:>9.1f} us -> {:>9.1f} us{}\n", sa.step_us, sb.step_us,
                     change(sa.step_us, sb.step_us));
  if (sa.bytes_known && sb.bytes_known) {
    out += fmt::format("  bytes moved by kernels {:>9} -> {:>9}  ({:+.1f} MB)\n", mb(sa.bytes), mb(sb.bytes),
                       (sb.bytes - sa.bytes) / 1e6);
  } else {
    out += "  bytes moved: not derivable: " + why_no_bytes(sa, sb, name_a, name_b) + "\n";
  }
  return out;
}

const char* kind_name(Cat c) { return c == Cat::GpuMemcpy ? "memcpy" : c == Cat::GpuMemset ? "memset" : "kernel"; }

std::string records(const DiffSummary& sa, const DiffSummary& sb, const std::string& name_a,
                    const std::string& name_b, OutputFormat format) {
  OutputTable rec;
  rec.columns = {"step",    "kind", "change", "name", "op_a",    "op_b",    "count_a",
                 "count_b", "a",    "b",      "unit", "bytes_a", "bytes_b", "note"};
  rec.numeric = {false, false, false, false, false, false, true, true, true, true, false, true, true, false};
  const std::string step = sa.step_name.empty() ? "mean" : sa.step_name;
  auto num = [](bool have, double v) { return have ? fmt::format("{}", v) : std::string(); };
  auto us = [](bool have, double v) { return have ? fmt::format("{:.3f}", v) : std::string(); };
  auto bytes = [](const DiffActivity* k) { return k && k->bytes_known ? fmt::format("{:.0f}", k->bytes) : std::string(); };
  for (const DiffRow& r : diff_rows(sa, sb)) {
    const DiffActivity& k = r.a ? *r.a : *r.b;
    rec.rows.push_back({step, kind_name(k.cat), r.change == DiffChange::Gone ? "gone" : r.change == DiffChange::New ? "new" : "both",
                        *r.name, r.a ? r.a->op : "", r.b ? r.b->op : "", num(r.a, r.a ? r.a->count : 0),
                        num(r.b, r.b ? r.b->count : 0), us(r.a, r.a ? r.a->us : 0), us(r.b, r.b ? r.b->us : 0), "us",
                        bytes(r.a), bytes(r.b), ""});
  }
  auto figure = [&](const std::string& name, const std::string& a, const std::string& b, const std::string& unit,
                    const std::string& note) {
    rec.rows.push_back({step, "step", "", name, "", "", "", "", a, b, unit, "", "", note});
  };
  std::string whole;
  for (const auto* t : {&sa, &sb}) {
    if (!t->whole_trace) continue;
    whole += (whole.empty() ? "" : "; ") + (t == &sa ? name_a : name_b) + " has no ProfilerStep: its whole trace is one window";
  }
  figure("kernels", num(true, sa.kernels), num(true, sb.kernels), "count", whole);
  figure("copies and sets", num(true, sa.copies), num(true, sb.copies), "count", "");
  figure("GPU busy", us(true, sa.busy_us), us(true, sb.busy_us), "us", "");
  figure("wall time", us(true, sa.step_us), us(true, sb.step_us), "us", "");
  figure("bytes moved by kernels", sa.bytes_known ? fmt::format("{:.0f}", sa.bytes) : "",
         sb.bytes_known ? fmt::format("{:.0f}", sb.bytes) : "", "bytes", why_no_bytes(sa, sb, name_a, name_b));
  return format == OutputFormat::Csv ? to_csv(rec) : to_json(rec);
}

}  // namespace

std::string diff_traces(const Trace& a, const Trace& b, const std::string& name_a, const std::string& name_b,
                        const std::string& step, OutputFormat format, int name_width) {
  const std::string pa = printable(name_a), pb = printable(name_b);
  const DiffSummary sa = diff_summary(a, step, pa), sb = diff_summary(b, step, pb);
  return format == OutputFormat::Text ? text(sa, sb, pa, pb, static_cast<size_t>(std::max(name_width, 20)))
                                      : records(sa, sb, pa, pb, format);
}

std::string diff_traces(const std::function<Trace()>& load_a, const std::function<Trace()>& load_b,
                        const std::string& name_a, const std::string& name_b, const std::string& step,
                        OutputFormat format, int name_width) {
  const std::string pa = printable(name_a), pb = printable(name_b);
  const DiffSummary sa = diff_summary(load_a(), step, pa);  // the trace is a temporary: gone before b is read
  const DiffSummary sb = diff_summary(load_b(), step, pb);
  return format == OutputFormat::Text ? text(sa, sb, pa, pb, static_cast<size_t>(std::max(name_width, 20)))
                                      : records(sa, sb, pa, pb, format);
}

}  // namespace ladder

