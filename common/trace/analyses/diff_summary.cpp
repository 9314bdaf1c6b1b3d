// See diff_summary.h.
#include "trace/analyses/diff_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"
#include "trace/model/index.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

// A torch operator is namespace::name (aten::mm, c10d::allreduce_, ladder::gelu_mul). What Inductor wraps its
// kernels in is not: the Triton kernel's own name as a cpu_op, "## Call CompiledFxGraph ... ##", "Torch-Compiled
// Region: 0/0". Naming those would hide the kernel behind a copy of its name, so a row shows only real ops.
std::string torch_op(const std::string& name) { return name.find("::") != std::string::npos ? name : ""; }

bool is_graph_launch(const Event& e) { return e.name == "cudaGraphLaunch" || e.name.rfind("cuGraphLaunch", 0) == 0; }

}  // namespace

DiffSummary diff_summary(const Trace& t, const std::string& step, const std::string& trace_name) {
  DiffSummary s;
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
      DiffActivity& a = s.by_name[g->name];
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


std::vector<DiffRow> diff_rows(const DiffSummary& sa, const DiffSummary& sb) {
  std::vector<DiffRow> rows;
  for (const std::string& name : sa.order) {
    if (!sb.by_name.count(name)) rows.push_back({DiffChange::Gone, &name, &sa.by_name.at(name), nullptr});
  }
  for (const std::string& name : sb.order) {
    if (!sa.by_name.count(name)) rows.push_back({DiffChange::New, &name, nullptr, &sb.by_name.at(name)});
  }
  for (const std::string& name : sa.order) {
    auto it = sb.by_name.find(name);
    if (it != sb.by_name.end()) rows.push_back({DiffChange::Both, &name, &sa.by_name.at(name), &it->second});
  }
  return rows;
}


}  // namespace ladder
