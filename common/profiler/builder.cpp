// The join at the heart of the profiler, in three passes over plain records (see builder.h):
//  1. which of our ranges was innermost when each API call was made: CUPTI's external-correlation records map a
//     call's correlation id to the id of the op (and of the user range) open at that moment;
//  2. the API calls, with their op's id as "External id";
//  3. the GPU activities, with the same id through their correlation (and the extra args of that op, a collective's,
//     as Kineto copies them onto the NCCL kernel), plus one span per user range and stream over the GPU work launched
//     inside it (torch's gpu_user_annotation).
// Records arrive in no useful order (a kernel's record usually comes before its launch call's), which is why the
// join waits until everything is in.
#include "profiler/builder.h"

#include <cxxabi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace ladder {

std::string strip_version(std::string name) {
  const size_t v = name.rfind("_v");
  if (v == std::string::npos || name.size() - v - 2 < 4) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return name;
  std::string s(out);
  std::free(out);
  return s;
}

namespace {

// Runtime calls Kineto leaves out of its traces: frequent, instant, and about bookkeeping rather than GPU work.
bool blocklisted(const std::string& name) {
  static const std::unordered_set<std::string> kDrop = {
      "cudaGetDevice",       "cudaSetDevice",   "cudaGetLastError",
      "cudaPeekAtLastError", "cudaEventCreate", "cudaEventCreateWithFlags",
      "cudaEventDestroy",
  };
  return kDrop.count(name) > 0;
}

}  // namespace

BuiltEvents build_events(const Records& recs, std::vector<Event> host_ranges, int64_t window_start,
                         int64_t window_end, int64_t correlation_base) {
  BuiltEvents out;
  auto in_window = [&](uint64_t start, uint64_t end) {
    return start != 0 && static_cast<int64_t>(start) >= window_start && static_cast<int64_t>(end) <= window_end;
  };

  // Pass 1: which of our ranges was innermost when each API call was made, per stack.
  std::unordered_map<uint64_t, int64_t> op_of, user_of;
  for (const ExternalRecord& x : recs.ext) (x.stack == ExternalRecord::Op ? op_of : user_of)[x.correlation] = x.id;
  auto lookup = [](const std::unordered_map<uint64_t, int64_t>& m, uint64_t corr) -> int64_t {
    auto it = m.find(corr);
    return it == m.end() ? -1 : it->second;
  };
  std::unordered_set<uint64_t> gpu_correlations;
  for (const GpuRecord& r : recs.gpu) {
    if (r.start_ns == 0 || r.end_ns == 0) {
      out.incomplete_records++;
    } else if (in_window(r.start_ns, r.end_ns)) {
      gpu_correlations.insert(r.correlation);
    }
  }

  std::vector<Event>& events = out.events;
  std::unordered_map<int64_t, std::string> user_range_name;
  // An op's extra args (a collective's record_param_comms), which its GPU work carries too, as Kineto copies them.
  std::unordered_map<int64_t, std::shared_ptr<const std::vector<std::pair<std::string, std::string>>>> op_args;
  for (Event& e : host_ranges) {
    if (e.dur_ns < 0) continue;  // still open when the profiler stopped: it has no end
    if (e.cat == Cat::UserAnnotation) user_range_name[e.external_id] = e.name;
    if (e.cat == Cat::CpuOp && e.extra_args) op_args[e.external_id] = e.extra_args;
    events.push_back(std::move(e));
  }

  // Pass 2: runtime and driver calls. "External id" is the op's id only, as in torch: a call made directly in a
  // user range, like the step's cudaDeviceSynchronize, has none.
  for (const ApiRecord& r : recs.api) {
    if (!in_window(r.start_ns, r.end_ns)) continue;
    Event e;
    e.cat = r.driver ? Cat::CudaDriver : Cat::CudaRuntime;
    e.name = strip_version(r.name);
    // Of the driver API only the launches: the rest is the plumbing behind every runtime call.
    if ((r.driver && !is_launch_call(e)) || blocklisted(e.name)) continue;
    // nvcc's launch plumbing (__cudaPushCallConfiguration and friends) is noise unless it launched the work itself.
    if (e.name.rfind("__cuda", 0) == 0 && !gpu_correlations.count(r.correlation)) continue;
    e.pid = r.pid;
    e.tid = r.tid;
    e.ts_ns = static_cast<int64_t>(r.start_ns);
    e.dur_ns = static_cast<int64_t>(r.end_ns - r.start_ns);
    e.correlation = correlation_base + static_cast<int64_t>(r.correlation);  // see kCorrelationIdBase
    e.cbid = static_cast<int32_t>(r.cbid);
    e.external_id = lookup(op_of, r.correlation);
    events.push_back(std::move(e));
  }

  // Pass 3: kernels, copies and sets on the GPU lane (pid = device, tid = stream), and the span of each user range
  // over the GPU work it launched, one per range and stream.
  struct Span {
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::map<std::tuple<int64_t, int, int>, Span> spans;  // (user range id, device, stream)
  for (const GpuRecord& r : recs.gpu) {
    if (!in_window(r.start_ns, r.end_ns) || r.end_ns == 0) continue;
    Event e;
    e.cat = r.cat;
    e.name = r.cat == Cat::Kernel ? demangle(r.name) : r.name;
    e.pid = r.args.device;
    e.tid = r.args.stream;
    e.ts_ns = static_cast<int64_t>(r.start_ns);
    e.dur_ns = static_cast<int64_t>(r.end_ns - r.start_ns);
    e.correlation = correlation_base + static_cast<int64_t>(r.correlation);
    e.external_id = lookup(op_of, r.correlation);
    e.gpu = r.args;
    if (auto args = op_args.find(e.external_id); args != op_args.end()) e.extra_args = args->second;
    const int64_t user = lookup(user_of, r.correlation);
    auto name = user_range_name.find(user);
    // ProfilerStep#k gets no GPU span: torch shows none either, and it would only repeat the step.
    if (name != user_range_name.end() && name->second.rfind("ProfilerStep#", 0) != 0) {
      Span& s = spans[{user, r.args.device, r.args.stream}];
      s.first = std::min(s.first, e.ts_ns);
      s.last = std::max(s.last, e.end_ns());
    }
    events.push_back(std::move(e));
  }
  for (const auto& [key, span] : spans) {
    const auto& [user, device, stream] = key;
    Event e;
    e.cat = Cat::GpuUserAnnotation;
    e.name = user_range_name[user];
    e.pid = device;
    e.tid = stream;
    // One ns wider on each side, as Kineto draws it, so the span strictly encloses its first and last kernels.
    e.ts_ns = span.first - 1;
    e.dur_ns = span.last - span.first + 2;
    e.external_id = user;
    events.push_back(std::move(e));
  }

  // Time order, longest first at equal starts: parents before children, in the file and for every reader.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.dur_ns > b.dur_ns;
  });
  return out;
}

}  // namespace ladder
