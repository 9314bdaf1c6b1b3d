// See diff.h.
#include "trace/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>
#include <vector>

#include "trace/index.h"
#include "trace/steps.h"
#include "trace/text.h"
#include "trace/work.h"

namespace ladder {

namespace {

// One kernel, copy or set, by name, per step.
struct Activity {
  Cat cat = Cat::Kernel;
  std::string op;    // the torch op that launched it (see torch_op); "" when none
  int count = 0;     // per step
  double us = 0;     // per step, summed
  double bytes = 0;  // per step, where known: a kernel's from its op's shapes, a copy's or set's from the trace
  bool bytes_known = true;
};
struct TraceSummary {
  int steps = 0;
  bool whole_trace = false;
  std::string step_name;  // the one step compared, when one was chosen
  double step_us = 0, busy_us = 0, kernels = 0, copies = 0, bytes = 0;
  bool bytes_known = true;
  bool no_shapes = false;  // the kernels' bytes are not derivable because no op has recorded shapes,
  std::string no_bytes;    // or for these other reasons
  std::map<std::string, Activity> by_name;
  std::vector<std::string> order;  // first appearance in a step
};

// A torch operator is namespace::name (aten::mm, c10d::allreduce_, ladder::gelu_mul). What Inductor wraps its
// kernels in is not: the Triton kernel's own name as a cpu_op, "## Call CompiledFxGraph ... ##", "Torch-Compiled
// Region: 0/0". Naming those would hide the kernel behind a copy of its name, so a row shows only real ops.
std::string torch_op(const std::string& name) { return name.find("::") != std::string::npos ? name : ""; }

bool is_graph_launch(const Event& e) { return e.name == "cudaGraphLaunch" || e.name.rfind("cuGraphLaunch", 0) == 0; }

// Means over every step of `t`, or the one step named `step` ("3" = ProfilerStep#3). Linear in the events.
TraceSummary summarize(const Trace& t, const std::string& step, const std::string& trace_name) {
  TraceSummary s;
  const TraceIndex index(t);
  std::vector<StepStats> steps = step_stats(index);
  s.whole_trace = index.whole_trace();
  const int chosen = find_step(index, step, trace_name);
  if (chosen >= 0) {
    steps = {steps[static_cast<size_t>(chosen)]};
    s.step_name = steps[0].name;
  }
  s.steps = static_cast<int>(steps.size());
  if (steps.empty()) return s;
  // Kineto writes "Input Dims" only under record_shapes=True: no op with dims means none were recorded.
  bool has_shapes = false;
  for (const Event& e : t.events) has_shapes = has_shapes || !e.input_dims().empty();
  double no_op = 0, no_op_graph = 0, no_shapes = 0;
  std::vector<std::string> no_formula;  // in order of appearance, each once (the set: a hostile trace may hold a
  std::unordered_set<std::string> no_formula_seen;  // million distinct op names, and a search per kernel is quadratic)
  for (const StepStats& st : steps) {
    s.step_us += st.dur_ns / 1e3;
    s.busy_us += st.gpu_busy_ns / 1e3;
    for (const Event* g : st.gpu_events) {
      const int i = static_cast<int>(g - t.events.data());
      const int op_i = index.op_of(i);
      const Event* op = op_i >= 0 ? &t.events[static_cast<size_t>(op_i)] : nullptr;
      Activity& a = s.by_name[g->name];
      if (a.count == 0) {  // first time this name is seen
        s.order.push_back(g->name);
        a.cat = g->cat;
      }
      a.count += 1;
      a.us += g->dur_ns / 1e3;
      if (op && a.op.empty()) a.op = torch_op(op->name);
      if (g->cat != Cat::Kernel) {  // a copy or a set says how many bytes it moved
        s.copies += 1;
        a.bytes += static_cast<double>(g->gpu.bytes);
        a.bytes_known = a.bytes_known && g->gpu.bytes > 0;
        continue;
      }
      s.kernels += 1;
      Work w;
      if (op && op_work(*op, &w)) {
        a.bytes += w.bytes;
        s.bytes += w.bytes;
        continue;
      }
      a.bytes_known = false;
      s.bytes_known = false;
      if (!op) {
        no_op += 1;
        const int launch = index.launch_of(i);
        if (launch >= 0 && is_graph_launch(t.events[static_cast<size_t>(launch)])) no_op_graph += 1;
      } else if (!has_shapes) {
        no_shapes += 1;
      } else if (no_formula_seen.insert(op->name).second) {
        no_formula.push_back(op->name);
      }
    }
  }
  const double n = s.steps;
  s.step_us /= n;
  s.busy_us /= n;
  s.kernels /= n;
  s.copies /= n;
  s.bytes /= n;
  for (auto& [name, a] : s.by_name) {
    a.us /= n;
    a.bytes /= n;
    a.count = static_cast<int>(a.count / n + 0.5);
  }
  // Why, in the reader's terms: the option to record with, or what left the kernels without an op.
  std::vector<std::string> why;
  s.no_shapes = no_shapes > 0;
  if (no_op > 0) {
    why.push_back(fmt::format("{:g} kernel{} per step of {} carr{} no op ({})", no_op / n, no_op / n == 1 ? "" : "s",
                              trace_name, no_op / n == 1 ? "ies" : "y",
                              no_op_graph == no_op ? "replayed from a CUDA graph captured before profiling"
                                                   : "launched outside any op"));
  }
  if (!no_formula.empty()) {
    std::string ops;
    for (size_t k = 0; k < no_formula.size() && k < 3; ++k) ops += (k ? ", " : "") + printable(no_formula[k]);
    if (no_formula.size() > 3) ops += fmt::format(" and {} more", no_formula.size() - 3);
    why.push_back(fmt::format("no bytes formula for {} of {}", ops, trace_name));
  }
  for (const std::string& w : why) s.no_bytes += (s.no_bytes.empty() ? "" : "; ") + w;
  return s;
}

std::string mb(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }
// A row's bytes: a memset of 8 bytes is "8 B", not "0.0 MB".
std::string row_bytes(double bytes) {
  return bytes >= 1e5 ? mb(bytes) : bytes >= 100 ? fmt::format("{:.1f} kB", bytes / 1e3) : fmt::format("{:.0f} B", bytes);
}

// "[gelu] void ch03::gelu_vec_kernel<2, false>(...)": the op first, since long kernel names often differ only late.
// An = row whose ops differ names both, "-" for a side without one: "[aten::mm | aten::addmm]".
// Two labels that cut to the same text are cut in the middle instead ("[aten::mm] sm90_xmma...128x256_tn"), as the
// names that share a long head differ at their end; any still alike get " #2", " #3" in the order of the rows.
std::string full_label(const std::string& name, const Activity& k, const Activity* other) {
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
std::string why_no_bytes(const TraceSummary& sa, const TraceSummary& sb, const std::string& name_a,
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

enum class Change { Gone, New, Both };
struct Row {
  Change change;
  const std::string* name;
  const Activity *a, *b;  // nullptr on the side without it
};

// Gone first, then new, then those in both: what fusion removed and added reads at the top.
std::vector<Row> rows_of(const TraceSummary& sa, const TraceSummary& sb) {
  std::vector<Row> rows;
  for (const std::string& name : sa.order) {
    if (!sb.by_name.count(name)) rows.push_back({Change::Gone, &name, &sa.by_name.at(name), nullptr});
  }
  for (const std::string& name : sb.order) {
    if (!sa.by_name.count(name)) rows.push_back({Change::New, &name, nullptr, &sb.by_name.at(name)});
  }
  for (const std::string& name : sa.order) {
    auto it = sb.by_name.find(name);
    if (it != sb.by_name.end()) rows.push_back({Change::Both, &name, &sa.by_name.at(name), &it->second});
  }
  return rows;
}

std::string text(const TraceSummary& sa, const TraceSummary& sb, const std::string& name_a,
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
  const std::vector<Row> rows = rows_of(sa, sb);
  std::vector<std::string> full;
  std::vector<int64_t> counts;
  for (const Row& r : rows) {
    const Activity& k = r.a ? *r.a : *r.b;
    full.push_back(full_label(*r.name, k, r.change == Change::Both ? r.b : nullptr));
    counts.push_back(static_cast<int64_t>(k.count));
  }
  const std::vector<std::string> shown = labels_of(full, counts, w);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.change == Change::Both) {
      out += fmt::format("  = {:<{}} {:>9.1f} us -> {:>9.1f} us{}\n", shown[i], w, r.a->us,
                         r.b->us, r.a->count != r.b->count ? fmt::format("  ({}x -> {}x)", r.a->count, r.b->count) : "");
    } else {
      const Activity& k = r.a ? *r.a : *r.b;
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

std::string records(const TraceSummary& sa, const TraceSummary& sb, const std::string& name_a,
                    const std::string& name_b, OutputFormat format) {
  OutputTable rec;
  rec.columns = {"step",    "kind", "change", "name", "op_a",    "op_b",    "count_a",
                 "count_b", "a",    "b",      "unit", "bytes_a", "bytes_b", "note"};
  rec.numeric = {false, false, false, false, false, false, true, true, true, true, false, true, true, false};
  const std::string step = sa.step_name.empty() ? "mean" : sa.step_name;
  auto num = [](bool have, double v) { return have ? fmt::format("{}", v) : std::string(); };
  auto us = [](bool have, double v) { return have ? fmt::format("{:.3f}", v) : std::string(); };
  auto bytes = [](const Activity* k) { return k && k->bytes_known ? fmt::format("{:.0f}", k->bytes) : std::string(); };
  for (const Row& r : rows_of(sa, sb)) {
    const Activity& k = r.a ? *r.a : *r.b;
    rec.rows.push_back({step, kind_name(k.cat), r.change == Change::Gone ? "gone" : r.change == Change::New ? "new" : "both",
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
  const TraceSummary sa = summarize(a, step, pa), sb = summarize(b, step, pb);
  return format == OutputFormat::Text ? text(sa, sb, pa, pb, static_cast<size_t>(std::max(name_width, 20)))
                                      : records(sa, sb, pa, pb, format);
}

std::string diff_traces(const std::function<Trace()>& load_a, const std::function<Trace()>& load_b,
                        const std::string& name_a, const std::string& name_b, const std::string& step,
                        OutputFormat format, int name_width) {
  const std::string pa = printable(name_a), pb = printable(name_b);
  const TraceSummary sa = summarize(load_a(), step, pa);  // the trace is a temporary: gone before b is read
  const TraceSummary sb = summarize(load_b(), step, pb);
  return format == OutputFormat::Text ? text(sa, sb, pa, pb, static_cast<size_t>(std::max(name_width, 20)))
                                      : records(sa, sb, pa, pb, format);
}

}  // namespace ladder
