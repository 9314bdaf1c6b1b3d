// See kernel_table.h.
#include "trace/analyses/kernel_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "trace/analyses/steps.h"
#include "trace/analyses/work.h"

namespace ladder {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What the name says: 1 tensor cores, 0 not, -1 it does not say.
int name_says_tensor_cores(const std::string& kernel_name) {
  const std::string n = lower(kernel_name);
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("simt")) return 0;
  for (const char* s : {"nvjet", "wgmma", "hmma", "imma", "tensorop", "cutlass", "flash", "fmha", "884gemm",
                        "1688gemm", "16816gemm"}) {
    if (has(s)) return 1;
  }
  if (has("xmma")) return has("f32f32_f32f32_f32") && !has("tf32") ? 0 : 1;
  // The ladder's own GEMMs: ch04::(anonymous namespace)::geglu_gemm_fast_kernel(...), void ch06::...dgated_gemm_...
  const size_t ch = n.find("ch0");
  if (ch != std::string::npos && (ch == 0 || n[ch - 1] == ' ') && n.size() > ch + 5 && std::isdigit(n[ch + 3]) &&
      n.compare(ch + 4, 2, "::") == 0 && n.find("gemm", ch) != std::string::npos) {
    return 1;
  }
  return -1;
}

bool narrow_float(const std::string& torch_type) {
  return torch_type == "c10::BFloat16" || torch_type == "c10::Half" || torch_type.rfind("c10::Float8", 0) == 0;
}

}  // namespace

bool uses_tensor_cores(const std::string& kernel_name) { return name_says_tensor_cores(kernel_name) == 1; }

bool kernel_uses_tensor_cores(const std::string& kernel_name, const Event* op) {
  const int says = name_says_tensor_cores(kernel_name);
  if (says >= 0) return says == 1;
  if (!op) return false;
  Work w;
  if (!op_work(*op, &w) || w.flops <= 0) return false;
  const auto& types = op->input_types();
  return std::any_of(types.begin(), types.end(), narrow_float);
}

const char* kernel_why_text(int why) {
  static const char* const kText[kWhyCount] = {
      "no op launched it (no \"External id\" or correlation ties it to a cpu_op)",
      "its op has no \"Input Dims\" (recorded without record_shapes=True)",
      "no formula for its op and shapes (trace/analyses/work.h knows mm, addmm, matmul, linear, add, mul, gelu)",
      "its op launched more than one kernel: the op's work does not say how it splits between them",
      "a copy or set whose \"bytes\" the trace does not hold",
      "a copy or set: its own bytes per second; no % (a host copy is bound by the link, not the GPU's memory)",
      "an elementwise op: bytes, no FLOPs",
      "TFLOP/s from the \"flops\" torch recorded for its op (with_flops=True), where its Input Dims give none",
      "above the CUDA cores' FP32 peak, so on the tensor cores: % of the tensor-core peak",
      "above the peak TFLOP/s it would be rated against: no % (the peak or the op's FLOP count does not fit it)",
      "above the memory's peak GB/s: no % (the data came from the caches, or the byte count does not fit it)",
      "a collective (NCCL): GPUs exchanging data; no FLOPs, and its bytes are not the GPU memory's traffic",
  };
  return why >= 0 && why < kWhyCount ? kText[why] : "";
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
  if (e.name.rfind("nccl", 0) == 0) return kWhyCollective;  // before its op: record_param_comms has no formula
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
  // The op that launched this one kernel, if any: its dtype says what it ran on, its recorded FLOPs are this kernel's.
  const Event* launcher = e.cat == Cat::Kernel && op >= 0 && kernels_per_op.at(op) == 1 ? &index.event(op) : nullptr;
  if (row.calls == 0) {
    row.name = e.name;
    row.op = op_name;
    row.cat = cat_name(e.cat);
    row.first_ts = e.ts_ns;
    row.min_ns = row.max_ns = e.dur_ns;
    row.tensor_cores = e.cat == Cat::Kernel && kernel_uses_tensor_cores(e.name, launcher);
    row.copy = e.cat != Cat::Kernel;
  } else {
    if (row.op != op_name) row.op = "several ops";
    row.min_ns = std::min(row.min_ns, e.dur_ns);
    row.max_ns = std::max(row.max_ns, e.dur_ns);
    row.tensor_cores = row.tensor_cores || (e.cat == Cat::Kernel && kernel_uses_tensor_cores(e.name, launcher));
  }
  ++row.calls;
  row.total_ns += e.dur_ns;
  const double delta = static_cast<double>(e.dur_ns) - row.mean_ns;
  row.mean_ns += delta / row.calls;
  row.m2_ns += delta * (static_cast<double>(e.dur_ns) - row.mean_ns);
  Work w;
  const int why = work_of(index, i, kernels_per_op, &w);
  // torch's with_flops=True records an op's FLOPs ("flops"): they stand in where the shapes give none, for an op that
  // launched this one kernel (its FLOPs would not say how they split either).
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// HolisticTraceAnalysis's kernel_type (hta/utils/utils.py get_kernel_type): NCCL kernels, then copies and sets.
const char* hta_kernel_type(const std::string& name) {
  if (name.rfind("nccl", 0) == 0 && name.find("Kernel") != std::string::npos) return "COMMUNICATION";
  if (name.rfind("Memcpy", 0) == 0 || name.rfind("Memset", 0) == 0 || name.rfind("dma", 0) == 0) return "MEMORY";
  return "COMPUTATION";
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

KernelRates kernel_rates(const Row& r, const Peak& peak) {
  KernelRates k{kNaN, kNaN, kNaN, kNaN, kNaN};
  // A ceiling the chapter measured on its GPU (a copy, a cuBLAS GEMM) is no limit: a kernel may beat it by a little.
  const bool measured = peak.gpu == "measured";
  const bool from_recorded = r.rated == 0 && r.rec_calls > 0;  // the recorded FLOPs alone: a TFLOP/s, no GB/s
  if (from_recorded) {
    k.tflops = r.rec_flops / (static_cast<double>(r.rec_ns) * 1e-9) / 1e12;
  } else if (r.rated > 0) {
    const double s = static_cast<double>(r.rated_ns) * 1e-9;
    k.gbps = r.bytes / s / 1e9;
    if (r.flops_known) k.tflops = r.flops / s / 1e12;
    if (peak.gbps > 0 && !r.copy) {
      k.gbps_pct = 100 * k.gbps / peak.gbps;
      if (k.gbps_pct > 100 && !measured) {
        k.gbps_pct = kNaN;
        k.gbps_note = kWhyAboveBandwidth;
      }
    }
  }
  if (std::isnan(k.tflops)) return k;
  // The peak it is rated against: the tensor cores' for a kernel on them, else the FP32 units' where there is one.
  double against = !r.tensor_cores && peak.fp32_tflops > 0 ? peak.fp32_tflops : peak.tflops;
  if (against <= 0) return k;
  if (k.tflops > against && against < peak.tflops) {  // faster than the FP32 units can be: on the tensor cores
    against = peak.tflops;
    k.tflops_note = kWhyAboveFp32;
  }
  if (k.tflops > against && !measured) {
    k.tflops_note = kWhyAbovePeak;
    return k;
  }
  k.peak_tflops = against;
  k.tflops_pct = 100 * k.tflops / against;
  return k;
}

int kernel_note(const Row& r) {
  if (r.rated == 0) return r.why;
  if (r.copy) return static_cast<int>(kWhyCopy);
  if (!r.flops_known) return static_cast<int>(kWhyNoFlops);
  return r.rated < r.calls ? r.why : static_cast<int>(kWhyNone);
}

Table kernel_frame(const KernelTable& table, const Peak& peak) {
  Table t;
  t.name = "kernels";
  enum Col : size_t { kName, kSum, kMax, kMin, kStd, kMean, kType, kOp, kCat, kCalls, kGpuPct, kBytes, kFlops,
                      kGbps, kGbpsPct, kTflops, kTflopsPct, kPeak, kTc, kRated, kNote };
  const std::pair<const char*, TableColumn::Type> cols[] = {
      {"name", TableColumn::Text},        {"sum (us)", TableColumn::Float},   {"max (us)", TableColumn::Float},
      {"min (us)", TableColumn::Float},   {"stddev", TableColumn::Float},     {"mean (us)", TableColumn::Float},
      {"kernel_type", TableColumn::Text}, {"op", TableColumn::Text},          {"category", TableColumn::Text},
      {"calls", TableColumn::Int},        {"gpu_pct", TableColumn::Float},    {"bytes", TableColumn::Float},
      {"flops", TableColumn::Float},      {"gbps", TableColumn::Float},       {"gbps_pct", TableColumn::Float},
      {"tflops", TableColumn::Float},     {"tflops_pct", TableColumn::Float}, {"peak_tflops", TableColumn::Float},
      {"tensor_cores", TableColumn::Text}, {"rated_calls", TableColumn::Int}, {"note", TableColumn::Text}};
  for (const auto& [name, type] : cols) t.add(name, type);
  auto f = [&](Col c) -> std::vector<double>& { return t.columns[c].floats; };
  auto s = [&](Col c) -> std::vector<std::string>& { return t.columns[c].texts; };
  for (const Row& r : table.rows) {
    const KernelRates k = kernel_rates(r, peak);
    s(kName).push_back(r.name);
    f(kSum).push_back(static_cast<double>(r.total_ns) / 1e3);
    f(kMax).push_back(static_cast<double>(r.max_ns) / 1e3);
    f(kMin).push_back(static_cast<double>(r.min_ns) / 1e3);
    f(kStd).push_back(r.calls > 1 ? std::sqrt(r.m2_ns / (r.calls - 1)) / 1e3 : 0.0);
    f(kMean).push_back(static_cast<double>(r.total_ns) / 1e3 / r.calls);
    s(kType).push_back(hta_kernel_type(r.name));
    s(kOp).push_back(r.op);
    s(kCat).push_back(r.cat);
    t.columns[kCalls].ints.push_back(r.calls);
    f(kGpuPct).push_back(table.gpu_ns > 0 ? 100.0 * static_cast<double>(r.total_ns) / table.gpu_ns : kNaN);
    f(kBytes).push_back(r.rated ? r.bytes : kNaN);
    f(kFlops).push_back(r.rated && r.flops_known ? r.flops : r.rec_calls ? r.rec_flops : kNaN);
    f(kGbps).push_back(k.gbps);
    f(kGbpsPct).push_back(k.gbps_pct);
    f(kTflops).push_back(k.tflops);
    f(kTflopsPct).push_back(k.tflops_pct);
    f(kPeak).push_back(k.peak_tflops);
    s(kTc).push_back(r.copy ? "" : r.tensor_cores ? "yes" : "no");
    t.columns[kRated].ints.push_back(r.rated);
    std::string note;
    auto add = [&](int why) {
      if (why != kWhyNone) note += (note.empty() ? "" : "; ") + std::string(kernel_why_text(why));
    };
    add(kernel_note(r));
    if (r.recorded || (r.rated == 0 && r.rec_calls)) add(kWhyRecorded);
    add(k.tflops_note);
    add(k.gbps_note);
    s(kNote).push_back(note);
  }
  return t;
}

}  // namespace ladder
