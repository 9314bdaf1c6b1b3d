// See kernel_table.h.
#include "trace/analyses/kernel_table.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"

namespace ladder {

bool uses_tensor_cores(const std::string& kernel_name) {
  std::string n = kernel_name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("simt")) return false;
  for (const char* s : {"nvjet", "wgmma", "hmma", "imma", "tensorop", "cutlass", "flash", "fmha", "884gemm",
                        "1688gemm", "16816gemm"}) {
    if (has(s)) return true;
  }
  return has("xmma") && !(has("f32f32_f32f32_f32") && !has("tf32"));
}

namespace {

using Row = KernelRow;

// The work of GPU activity i, or the reason there is none.
int work_of(const TraceIndex& index, int i, const std::unordered_map<int, int>& kernels_per_op, Work* w) {
  const Event& e = index.event(i);
  if (e.cat != Cat::Kernel) {
    if (e.gpu.bytes <= 0) return kWhyNoBytes;
    *w = Work{0, static_cast<double>(e.gpu.bytes)};
    return kWhyNone;
  }
  const int op = index.op_of(i);
  if (op < 0) return kWhyNoOp;
  const Event& o = index.event(op);
  if (o.input_dims().empty()) return kWhyNoShapes;
  if (!op_work(o, w)) return kWhyNoFormula;
  if (kernels_per_op.at(op) > 1) return kWhySplit;
  return kWhyNone;
}

// The GPU activities of the step (or of the whole trace, in time order).
std::vector<int> activities(const TraceIndex& index, int step) {
  if (step >= 0) return index.gpu_activities(step);
  std::vector<int> acts;
  const Trace& t = index.trace();
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (is_gpu_activity(t.events[i].cat)) acts.push_back(static_cast<int>(i));
  }
  std::stable_sort(acts.begin(), acts.end(), [&](int a, int b) { return index.event(a).ts_ns < index.event(b).ts_ns; });
  return acts;
}

// Activity i counted in its row: its time, and its work where that is known (else the first reason it is not).
void add_activity(const TraceIndex& index, int i, const std::unordered_map<int, int>& kernels_per_op, Row& row) {
  const Event& e = index.event(i);
  const int op = index.op_of(i);  // a copy's or set's op too: cuBLAS's memset belongs to its mm
  const std::string op_name = op >= 0 ? index.event(op).name : "";
  if (row.calls == 0) {
    row.name = e.name;
    row.op = op_name;
    row.cat = cat_name(e.cat);
    row.first_ts = e.ts_ns;
    row.tensor_cores = e.cat == Cat::Kernel && uses_tensor_cores(e.name);
    row.copy = e.cat != Cat::Kernel;
  } else if (row.op != op_name) {
    row.op = "several ops";
  }
  ++row.calls;
  row.total_ns += e.dur_ns;
  Work w;
  const int why = work_of(index, i, kernels_per_op, &w);
  // torch's with_flops=True records an op's FLOPs ("flops"): they stand in where the shapes give none, for an op that
  // launched this one kernel (its FLOPs would not say how they split either).
  const Event* launcher = e.cat == Cat::Kernel && op >= 0 && kernels_per_op.at(op) == 1 ? &index.event(op) : nullptr;
  const bool recorded = launcher && launcher->flops > 0 && e.dur_ns > 0;
  if (why == kWhyNone && recorded && w.flops == 0) {
    w.flops = static_cast<double>(launcher->flops);
    row.recorded = true;
  }
  if (recorded && (why == kWhyNoShapes || why == kWhyNoFormula)) {
    row.rec_flops += static_cast<double>(launcher->flops);
    row.rec_ns += e.dur_ns;
    ++row.rec_calls;
  }
  if (why == kWhyNone && e.dur_ns > 0) {
    row.bytes += w.bytes;
    row.flops += w.flops;
    row.flops_known = row.flops_known || w.flops > 0;
    row.rated_ns += e.dur_ns;
    ++row.rated;
  } else if (row.why == kWhyNone) {
    row.why = why == kWhyNone ? kWhyNoBytes : why;
  }
}

}  // namespace

KernelTable kernel_table(const TraceIndex& index, int step, bool all) {
  const Trace& t = index.trace();
  check_step_index(index, step);
  const std::vector<int> acts = activities(index, step);
  // How many kernels each op launched (over the whole trace: an op's kernels are all in its step).
  std::unordered_map<int, int> kernels_per_op;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].cat != Cat::Kernel) continue;
    if (const int op = index.op_of(static_cast<int>(i)); op >= 0) ++kernels_per_op[op];
  }
  KernelTable table;
  table.activities = acts.size();
  std::vector<Row>& rows = table.rows;
  std::map<std::pair<Cat, std::string>, size_t> row_of;
  for (int i : acts) {
    const Event& e = index.event(i);
    table.gpu_ns += e.dur_ns;
    size_t r = rows.size();
    if (!all) {
      auto [it, fresh] = row_of.emplace(std::make_pair(e.cat, e.name), rows.size());
      r = it->second;
      if (fresh) rows.emplace_back();
    } else {
      rows.emplace_back();
    }
    add_activity(index, i, kernels_per_op, rows[r]);
  }
  if (!all) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ns > b.total_ns; });
  }
  return table;
}

}  // namespace ladder
