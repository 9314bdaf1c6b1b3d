// The profiler: host ranges we stamp ourselves, plus what CUPTI's activity API records on the GPU side, joined into
// one `Trace` the way Kineto (PyTorch's profiler) joins them.
//
// How the pieces fit:
//  - Each Range (a step, a forward, an op) stamps its start and end with trace_clock_ns(), the clock CUPTI stamps
//    its own records with, so host ranges and GPU activities share one time axis.
//  - While a range is open it pushes its id as a CUPTI "external correlation id". CUPTI then emits, for every API
//    call made meanwhile, an EXTERNAL_CORRELATION record: (correlation id of the call) -> (our id). Ops push on the
//    CUSTOM0 stack, user ranges on CUSTOM1: the first gives kernels their "External id", the second the span of a
//    user range on the GPU lane (gpu_user_annotation).
//  - CUPTI hands records over in buffers, asynchronously and in no useful order (a kernel record usually arrives
//    before the record of the launch call that made it). So records are only queued while the program runs, and
//    everything is joined in two passes at the end, by correlation id.
#include "profiler.h"

#include <cuda_occupancy.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "check.h"

namespace ladder {

// ---- schedule ----------------------------------------------------------------------------------------------------

StepAction step_action(const Schedule& s, int step) {
  if (step < s.wait || step >= s.total_steps() || s.active <= 0) return StepAction::None;
  if (step < s.wait + s.warmup) return StepAction::Warmup;
  return step == s.total_steps() - 1 ? StepAction::RecordAndSave : StepAction::Record;
}

const char* step_action_name(StepAction action) {
  switch (action) {
    case StepAction::None:
      return "NONE";
    case StepAction::Warmup:
      return "WARMUP";
    case StepAction::Record:
      return "RECORD";
    case StepAction::RecordAndSave:
      return "RECORD_AND_SAVE";
  }
  return "?";
}

int64_t trace_clock_ns() {
  // CUPTI documents cuptiGetTimestamp as "normalized to correspond with the start and end timestamps reported in
  // the CUPTI activity records". On Linux that is clock_gettime(CLOCK_REALTIME) (WSL uses another clock, which
  // this call follows too); the fallback only matters if CUPTI cannot be loaded at all.
  uint64_t t = 0;
  if (cuptiGetTimestamp(&t) == CUPTI_SUCCESS) return static_cast<int64_t>(t);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

// The record structs of the CUPTI we compile against. Newer CUPTI versions only append fields to new struct
// versions, so reading a record through a struct no newer than the library's is safe.
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using MemsetRecord = CUpti_ActivityMemset4;

// What we keep of each record: plain copies, so the CUPTI buffer can go back at once.
struct ApiRec {
  bool driver = false;
  uint32_t cbid = 0, pid = 0, tid = 0, correlation = 0;
  uint64_t start = 0, end = 0;
};
struct GpuRec {
  Cat cat = Cat::Kernel;
  std::string name;  // kernels: mangled name as CUPTI gives it
  uint64_t start = 0, end = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers = 0, static_smem = 0, dynamic_smem = 0;
  uint64_t bytes = 0;
  int copy_kind = 0, src_kind = 0, dst_kind = 0, memory_kind = 0;
};
struct ExtRec {
  int kind = 0;  // CUpti_ExternalCorrelationKind
  uint64_t id = 0;
  uint32_t correlation = 0;
};
struct Records {
  std::vector<ApiRec> api;
  std::vector<GpuRec> gpu;
  std::vector<ExtRec> ext;
  size_t zero_timestamps = 0;  // records CUPTI could not complete (its device buffer ran short)
  void append(Records&& other) {
    api.insert(api.end(), other.api.begin(), other.api.end());
    gpu.insert(gpu.end(), std::make_move_iterator(other.gpu.begin()), std::make_move_iterator(other.gpu.end()));
    ext.insert(ext.end(), other.ext.begin(), other.ext.end());
    zero_timestamps += other.zero_timestamps;
  }
};

// 4 MB per buffer, 8-byte aligned as CUPTI requires (its docs recommend 1 to 10 MB).
constexpr size_t kBufferBytes = 4 * 1024 * 1024;

// The sink the CUPTI buffer callbacks append to. CUPTI calls them from its own thread, possibly after a Profiler is
// gone, so they go through this lock-protected pointer rather than through a Profiler.
std::mutex g_sink_mutex;
Records* g_sink = nullptr;
std::atomic<size_t> g_dropped{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// The fields every GPU activity record has, whichever struct it comes in.
template <class R>
GpuRec gpu_record(Cat cat, const R* r) {
  GpuRec g;
  g.cat = cat;
  g.start = r->start;
  g.end = r->end;
  g.device = r->deviceId;
  g.context = r->contextId;
  g.stream = r->streamId;
  g.correlation = r->correlationId;
  return g;
}

void parse_record(const CUpti_Activity* rec, Records& out) {
  // A zero timestamp means CUPTI's device buffer ran short for this record: count it, do not draw it at time 0.
  auto keep = [&](GpuRec&& g) {
    if (g.start == 0 || g.end == 0)
      out.zero_timestamps++;
    else
      out.gpu.push_back(std::move(g));
  };
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(rec);
      GpuRec g = gpu_record(Cat::Kernel, k);
      g.name = k->name ? k->name : "";
      g.grid[0] = k->gridX, g.grid[1] = k->gridY, g.grid[2] = k->gridZ;
      g.block[0] = k->blockX, g.block[1] = k->blockY, g.block[2] = k->blockZ;
      g.registers = k->registersPerThread;
      g.static_smem = k->staticSharedMemory;
      g.dynamic_smem = k->dynamicSharedMemory;
      keep(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(rec);
      GpuRec g = gpu_record(Cat::GpuMemcpy, m);
      g.bytes = m->bytes;
      g.copy_kind = m->copyKind;
      g.src_kind = m->srcKind;
      g.dst_kind = m->dstKind;
      keep(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const MemsetRecord*>(rec);
      GpuRec g = gpu_record(Cat::GpuMemset, m);
      g.bytes = m->bytes;
      g.memory_kind = m->memoryKind;
      keep(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      ApiRec r;
      r.driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      r.cbid = a->cbid;
      r.pid = a->processId;
      r.tid = a->threadId;
      r.correlation = a->correlationId;
      r.start = a->start;
      r.end = a->end;
      out.api.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      out.ext.push_back(ExtRec{static_cast<int>(x->externalKind), x->externalId, x->correlationId});
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid_size) {
  // Parse without holding any lock: this runs on CUPTI's thread while the program keeps launching work.
  Records parsed;
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) parse_record(rec, parsed);
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    if (g_sink) g_sink->append(std::move(parsed));
  }
  std::free(buffer);
  // Asked outside our lock on purpose: CUPTI takes its own lock here, and holding ours meanwhile can deadlock
  // against a thread that holds CUPTI's lock and waits for ours (Kineto hit exactly this).
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
}

// One line saying the profiler could not start and why, with a hint for the two usual causes.
[[noreturn]] void cannot_start(const char* call, CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  std::string why = std::string(call) + " failed: " + (msg ? msg : "unknown CUPTI error");
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    why += " (another profiler, e.g. Nsight Systems or Nsight Compute, already holds CUPTI; run without it)";
  } else if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    why += " (this user may not profile the GPU; see NVIDIA's ERR_NVGPUCTRPERM page)";
  }
  throw Error("the profiler could not start: " + why);
}

void start_call(const char* call, CUptiResult r) {
  if (r != CUPTI_SUCCESS) cannot_start(call, r);
}
#define START_CUPTI(expr) start_call(#expr, (expr))

// Activity kinds we enable. CONCURRENT_KERNEL, never KIND_KERNEL: the header warns that KIND_KERNEL serializes all
// kernels, which would change the very timeline we want to show.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
// Of the driver API only the kernel launches: all of KIND_DRIVER floods a trace with the hundreds of calls cuBLAS
// makes when it starts, and with the driver calls behind every runtime call. cuBLASLt's kernels (nvjet_*) and
// Triton-style code launch through these instead of cudaLaunchKernel.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

bool is_driver_launch(uint32_t cbid) {
  for (CUpti_CallbackId launch : kDriverLaunches) {
    if (launch == cbid) return true;
  }
  return false;
}

// Runtime calls Kineto leaves out of its traces: frequent, instant, and about bookkeeping rather than GPU work.
bool blocklisted(const std::string& name) {
  static const std::unordered_set<std::string> kDrop = {
      "cudaGetDevice",       "cudaSetDevice",   "cudaGetLastError",
      "cudaPeekAtLastError", "cudaEventCreate", "cudaEventCreateWithFlags",
      "cudaEventDestroy",
  };
  return kDrop.count(name) > 0;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry the API version the call appeared
// in; traces (and tools reading them, like HTA) use the plain name.
std::string strip_version(std::string name) {
  const size_t v = name.rfind("_v");
  if (v == std::string::npos || name.size() - v - 2 < 4) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

std::string callback_name(bool driver, uint32_t cbid) {
  static std::mutex m;
  static std::map<std::pair<bool, uint32_t>, std::string> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find({driver, cbid});
  if (it != cache.end()) return it->second;
  const char* raw = nullptr;
  std::string name;
  if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &raw) ==
          CUPTI_SUCCESS &&
      raw) {
    name = strip_version(raw);
  } else {
    name = std::string(driver ? "driver" : "runtime") + " cbid " + std::to_string(cbid);
  }
  return cache[{driver, cbid}] = name;
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return name;  // extern "C" and cuBLAS kernels come unmangled
  std::string s(out);
  std::free(out);
  return s;
}

const char* memcpy_kind_name(int kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "Unknown";
  }
}

const char* memory_kind_name(int kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

int64_t this_thread_id() { return static_cast<int64_t>(syscall(SYS_gettid)); }

std::string process_name() {
  std::ifstream f("/proc/self/comm");
  std::string name;
  std::getline(f, name);
  return name.empty() ? "ladder" : name;
}

}  // namespace

// ---- the profiler's state ----------------------------------------------------------------------------------------

struct Profiler::Impl {
  Schedule schedule;
  std::vector<cudaDeviceProp> props;  // per device, for the derived kernel args
  bool cupti_on = false;
  bool window_open = false;
  std::atomic<bool> recording{false};
  std::atomic<int64_t> next_id{1};  // External ids: one per recorded range, starting at 1 like torch's
  int64_t window_start = 0, window_end = 0;
  std::unique_ptr<Range> step_range;  // ProfilerStep#k, open between begin_step and end_step
  bool built = false;
  Trace trace;

  Records records;  // filled by buffer_completed under g_sink_mutex

  // Host ranges, recorded from any thread.
  std::mutex host_mutex;
  std::vector<Event> host;
  std::unordered_map<int64_t, size_t> open;  // External id -> index in `host` of a range not closed yet

  int64_t open_range(const std::string& name, Cat cat, std::initializer_list<const Tensor*> inputs) {
    Event e;
    e.cat = cat;
    e.name = name;
    e.pid = getpid();
    e.tid = this_thread_id();
    e.external_id = next_id++;
    for (const Tensor* t : inputs) {
      // torch writes an empty entry for an input that is not a tensor; a null pointer plays that role here.
      e.input_dims.push_back(t ? t->shape : Shape{});
      e.input_types.push_back(t ? dtype_torch_name(t->dtype) : "");
      e.input_strides.push_back(t ? t->strides : Shape{});
    }
    e.dur_ns = -1;  // open
    e.ts_ns = trace_clock_ns();
    std::lock_guard<std::mutex> lock(host_mutex);
    open[e.external_id] = host.size();
    host.push_back(std::move(e));
    return host.back().external_id;
  }

  void close_range(int64_t id, int64_t end_ns) {
    std::lock_guard<std::mutex> lock(host_mutex);
    auto it = open.find(id);
    if (it == open.end()) return;  // opened during warmup and thrown away since
    host[it->second].dur_ns = std::max<int64_t>(0, end_ns - host[it->second].ts_ns);
    open.erase(it);
  }

  void enable_cupti() {
    cupti_on = true;  // set first, so that a failure half-way is still undone by ~Profiler
    for (CUpti_ActivityKind k : kKinds) START_CUPTI(cuptiActivityEnable(k));
    // The header says cuptiActivityEnableDriverApi(cbid, 1) alone records just those calls, but with CUDA 13.0 on
    // an H100 (driver 580) it recorded nothing, and the nvjet kernels lost their launch and their External id. What
    // works: turn the whole driver kind on, then every driver call but the launches off again. (build() also keeps
    // only the launches, should some other call slip through.)
    START_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
      if (!is_driver_launch(cbid)) cuptiActivityEnableDriverApi(cbid, 0);  // ids the driver lacks are refused: fine
    }
  }

  void disable_cupti() {
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    cupti_on = false;
  }

  // Throws away what warmup recorded: its records carry one-time costs (module loading, cuBLAS heuristics) that
  // would make the first active step look nothing like the others.
  // Kineto flushes CUPTI here (cuptiActivityFlushAll) and drops what comes back. We only drop what has arrived and
  // let the capture window (records stamped before window_start are left out in build()) drop the rest when it
  // arrives: measured on an H100, a flush here made the first active step about 2 ms slower than the next ones,
  // because CUPTI's first records after a flush pay for a fresh buffer, inside the step we want to show.
  void discard_warmup() {
    {
      std::lock_guard<std::mutex> lock(g_sink_mutex);
      records = Records{};
    }
    std::lock_guard<std::mutex> lock(host_mutex);
    host.clear();
    open.clear();
    // Ids restart with the kept steps, as in torch's traces (ProfilerStep#2 is External id 1). Late warmup records
    // cannot be confused with new ones: they are matched by CUPTI correlation id, which never repeats.
    next_id = 1;
  }

  void finish();
  void build();
  void fill_kernel_args(const GpuRec& r, GpuArgs& g) const;
};

namespace {
std::atomic<Profiler*> g_current{nullptr};
std::atomic<Profiler::Impl*> g_impl{nullptr};
}  // namespace

void Profiler::Impl::finish() {
  // Everything launched must have run before CUPTI can report it; this sync is recorded too (torch's last
  // cudaDeviceSynchronize, outside every step, is the same call).
  CUDA_CHECK(cudaDeviceSynchronize());
  window_end = trace_clock_ns();
  recording = false;
  // FORCED also hands over buffers that are not full yet; without it the last records would stay inside CUPTI.
  const CUptiResult flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_cupti();
  CUPTI_CHECK(flush);
  size_t dropped = g_dropped.exchange(0);
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    dropped += records.zero_timestamps;
  }
  if (dropped > 0) {
    throw Error("the profiler lost " + std::to_string(dropped) +
                " CUPTI records (its buffers were full or returned too late), so the trace would be missing GPU "
                "work; profile fewer steps or a smaller run");
  }
  build();
}

void Profiler::Impl::fill_kernel_args(const GpuRec& r, GpuArgs& g) const {
  g.registers_per_thread = r.registers;
  g.shared_memory = r.static_smem + r.dynamic_smem;
  for (int i = 0; i < 3; ++i) g.grid[i] = r.grid[i], g.block[i] = r.block[i];
  if (r.device >= props.size()) return;
  const cudaDeviceProp& p = props[r.device];
  const int block_size = r.block[0] * r.block[1] * r.block[2];
  const double blocks = static_cast<double>(r.grid[0]) * r.grid[1] * r.grid[2];
  if (p.multiProcessorCount <= 0 || block_size <= 0) return;
  // How many blocks each SM gets if the grid is spread evenly, and how many warps that is: below 1 block per SM,
  // part of the GPU sits idle for the whole kernel.
  g.blocks_per_sm = blocks / p.multiProcessorCount;
  g.warps_per_sm = g.blocks_per_sm * block_size / (p.warpSize > 0 ? p.warpSize : 32);
  // The occupancy calculator says how many blocks of this size, registers and shared memory fit on one SM at a
  // time. The estimate is the fraction of the SM's thread slots those blocks fill, capped by the blocks the grid
  // actually gives each SM. Like Kineto, it assumes the default shared-memory limit, so a kernel that opted in to
  // more (cuBLAS's large tiles) gets 0.
  cudaOccDeviceProp occ_prop(p);
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = p.maxThreadsPerBlock;
  attr.numRegs = r.registers;
  attr.sharedSizeBytes = static_cast<size_t>(r.static_smem);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
  attr.maxDynamicSharedSizeBytes = 0;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult result{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &occ_prop, &attr, &state, block_size,
                                              static_cast<size_t>(r.dynamic_smem)) == CUDA_OCC_SUCCESS &&
      p.maxThreadsPerMultiProcessor > 0) {
    const double active = std::min<double>(result.activeBlocksPerMultiprocessor, g.blocks_per_sm);
    g.est_occupancy_pct = static_cast<int>(std::lround(100.0 * active * block_size / p.maxThreadsPerMultiProcessor));
  }
}

void Profiler::Impl::build() {
  Records recs;
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    recs = std::move(records);
    records = Records{};
  }
  auto in_window = [&](uint64_t start, uint64_t end) {
    return static_cast<int64_t>(start) >= window_start && static_cast<int64_t>(end) <= window_end;
  };

  // Pass 1: which of our ranges was innermost when each API call was made, per stack.
  std::unordered_map<uint32_t, int64_t> op_of, user_of;
  for (const ExtRec& x : recs.ext) {
    if (x.kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) op_of[x.correlation] = static_cast<int64_t>(x.id);
    if (x.kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) user_of[x.correlation] = static_cast<int64_t>(x.id);
  }
  auto lookup = [](const std::unordered_map<uint32_t, int64_t>& m, uint32_t corr) -> int64_t {
    auto it = m.find(corr);
    return it == m.end() ? -1 : it->second;
  };

  std::vector<Event> events;
  std::unordered_set<uint32_t> gpu_correlations;
  for (const GpuRec& r : recs.gpu) {
    if (in_window(r.start, r.end)) gpu_correlations.insert(r.correlation);
  }

  // Pass 2a: the host ranges (all closed by now, unless a range outlives the profiler: left out, it has no end).
  {
    std::lock_guard<std::mutex> lock(host_mutex);
    for (Event& e : host) {
      if (e.dur_ns >= 0) events.push_back(std::move(e));
    }
    host.clear();
    open.clear();
  }
  std::unordered_map<int64_t, std::string> user_range_name;
  for (const Event& e : events) {
    if (e.cat == Cat::UserAnnotation) user_range_name[e.external_id] = e.name;
  }

  // Pass 2b: runtime and driver calls. "External id" is the op's (CUSTOM0) id only, as in torch: a call made
  // directly in a user range, like the step's cudaDeviceSynchronize, has none.
  for (const ApiRec& r : recs.api) {
    if (!in_window(r.start, r.end) || (r.driver && !is_driver_launch(r.cbid))) continue;
    std::string name = callback_name(r.driver, r.cbid);
    if (blocklisted(name)) continue;
    // nvcc's launch plumbing (__cudaPushCallConfiguration and friends) is noise unless it launched the work itself.
    if (name.rfind("__cuda", 0) == 0 && !gpu_correlations.count(r.correlation)) continue;
    Event e;
    e.cat = r.driver ? Cat::CudaDriver : Cat::CudaRuntime;
    e.name = std::move(name);
    e.pid = r.pid;
    e.tid = r.tid;
    e.ts_ns = static_cast<int64_t>(r.start);
    e.dur_ns = static_cast<int64_t>(r.end - r.start);
    e.correlation = r.correlation;
    e.cbid = r.cbid;
    e.external_id = lookup(op_of, r.correlation);
    events.push_back(std::move(e));
  }

  // Pass 2c: kernels, copies and sets on the GPU lane (pid = device, tid = stream), plus the span of each user
  // range over the GPU work it launched (torch's gpu_user_annotation), one per range and stream.
  struct Span {
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::map<std::tuple<int64_t, uint32_t, uint32_t>, Span> spans;  // (user range id, device, stream)
  for (const GpuRec& r : recs.gpu) {
    if (!in_window(r.start, r.end)) continue;
    Event e;
    e.cat = r.cat;
    e.pid = r.device;
    e.tid = r.stream;
    e.ts_ns = static_cast<int64_t>(r.start);
    e.dur_ns = static_cast<int64_t>(r.end - r.start);
    e.correlation = r.correlation;
    e.external_id = lookup(op_of, r.correlation);
    e.gpu.device = static_cast<int>(r.device);
    e.gpu.context = static_cast<int>(r.context);
    e.gpu.stream = static_cast<int>(r.stream);
    e.gpu.bytes = static_cast<int64_t>(r.bytes);
    if (r.cat == Cat::Kernel) {
      e.name = demangle(r.name);
      fill_kernel_args(r, e.gpu);
    } else if (r.cat == Cat::GpuMemcpy) {
      e.name = std::string("Memcpy ") + memcpy_kind_name(r.copy_kind) + " (" + memory_kind_name(r.src_kind) + " -> " +
               memory_kind_name(r.dst_kind) + ")";
    } else {
      e.name = std::string("Memset (") + memory_kind_name(r.memory_kind) + ")";
    }
    const int64_t user = lookup(user_of, r.correlation);
    auto name = user_range_name.find(user);
    // ProfilerStep#k gets no GPU span: torch shows none either, and it would only repeat the step.
    if (name != user_range_name.end() && name->second.rfind("ProfilerStep#", 0) != 0) {
      Span& s = spans[{user, r.device, r.stream}];
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
  trace.events = std::move(events);
  trace.window_start_ns = window_start;
  trace.window_end_ns = window_end;
  built = true;
}

// ---- Profiler ----------------------------------------------------------------------------------------------------

Profiler::Profiler(const Schedule& schedule) : impl_(std::make_unique<Impl>()) {
  if (schedule.wait < 0 || schedule.warmup < 0 || schedule.active < 1) {
    throw Error("profiler schedule needs wait >= 0, warmup >= 0 and active >= 1");
  }
  Profiler* expected = nullptr;
  if (!g_current.compare_exchange_strong(expected, this)) throw Error("only one Profiler can exist at a time");
  try {
    impl_->schedule = schedule;
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    Trace& t = impl_->trace;
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp p{};
      CUDA_CHECK(cudaGetDeviceProperties(&p, d));
      impl_->props.push_back(p);
      DeviceProps dp;
      dp.id = d;
      dp.name = p.name;
      dp.total_global_mem = static_cast<int64_t>(p.totalGlobalMem);
      dp.compute_major = p.major;
      dp.compute_minor = p.minor;
      dp.max_threads_per_block = p.maxThreadsPerBlock;
      dp.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
      dp.regs_per_block = p.regsPerBlock;
      dp.warp_size = p.warpSize;
      dp.shared_mem_per_block = static_cast<int64_t>(p.sharedMemPerBlock);
      dp.num_sms = p.multiProcessorCount;
      dp.regs_per_sm = p.regsPerMultiprocessor;
      dp.shared_mem_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
      dp.shared_mem_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
      t.devices.push_back(dp);
    }
    int driver = 0, runtime = 0;
    uint32_t cupti = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cuptiGetVersion(&cupti);
    t.metadata["cuda_driver_version"] = std::to_string(driver);
    t.metadata["cuda_runtime_version"] = std::to_string(runtime);
    t.metadata["cupti_version"] = std::to_string(cupti);
    t.pid = getpid();
    t.process_name = process_name();

    // Thread ids as the OS numbers them (gettid), the ids our host ranges use, instead of pthread_self()'s bits.
    START_CUPTI(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
    START_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    {
      std::lock_guard<std::mutex> lock(g_sink_mutex);
      g_sink = &impl_->records;
    }
    g_dropped = 0;
    g_impl = impl_.get();
  } catch (...) {
    g_current = nullptr;
    throw;
  }
}

Profiler::~Profiler() {
  impl_->step_range.reset();
  g_impl = nullptr;
  if (impl_->cupti_on) {
    // Left early (an exception mid-run): stop CUPTI and let it hand back its buffers before the sink goes away.
    impl_->disable_cupti();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    g_sink = nullptr;
  }
  g_current = nullptr;
}

Profiler* Profiler::current() { return g_current.load(); }

bool Profiler::recording() const { return impl_->recording.load(); }

void Profiler::begin_step(int k) {
  Impl& im = *impl_;
  const StepAction action = step_action(im.schedule, k);
  if (action == StepAction::None) return;
  if (!im.cupti_on && !im.built) {
    im.enable_cupti();
    im.recording = true;
  }
  if ((action == StepAction::Record || action == StepAction::RecordAndSave) && !im.window_open) {
    im.discard_warmup();
    im.window_start = trace_clock_ns();
    im.window_open = true;
  }
  im.step_range = std::make_unique<Range>("ProfilerStep#" + std::to_string(k));
}

void Profiler::end_step(int k) {
  Impl& im = *impl_;
  im.step_range.reset();
  if (step_action(im.schedule, k) == StepAction::RecordAndSave && im.window_open && !im.built) im.finish();
}

Trace Profiler::take_trace() {
  if (!impl_->built) throw Error("take_trace(): the trace is ready only after the last active step has ended");
  return std::move(impl_->trace);
}

// ---- Range -------------------------------------------------------------------------------------------------------

namespace {
CUpti_ExternalCorrelationKind stack_of(Cat cat) {
  return cat == Cat::CpuOp ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
}

// Opens the recorded part of a range, returning its External id, or -1 when no profiler records.
int64_t begin_recorded(const std::string& name, Cat cat, std::initializer_list<const Tensor*> inputs) {
  Profiler::Impl* im = g_impl.load();
  if (!im || !im->recording) return -1;
  const int64_t id = im->open_range(name, cat, inputs);
  // From here until the matching pop, every CUDA call on this thread is tagged with our id.
  CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(stack_of(cat), static_cast<uint64_t>(id)));
  return id;
}

// Opens both faces of a range: the NVTX range (Nsight Systems shows it whether or not our profiler runs) and, while
// a profiler records, our own record.
int64_t open_range(const std::string& name, Cat cat, std::initializer_list<const Tensor*> inputs) {
  nvtxRangePushA(name.c_str());
  try {
    return begin_recorded(name, cat, inputs);
  } catch (...) {
    nvtxRangePop();  // a constructor that throws gets no destructor call
    throw;
  }
}
}  // namespace

Range::Range(const std::string& name, Cat cat) : slot_(open_range(name, cat, {})), cat_(cat) {}

Range::Range(const std::string& name, std::initializer_list<const Tensor*> inputs)
    : slot_(open_range(name, Cat::CpuOp, inputs)), cat_(Cat::CpuOp) {}

Range::~Range() {
  if (slot_ >= 0) {
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(stack_of(cat_), &last);  // a destructor must not throw
    if (Profiler::Impl* im = g_impl.load()) im->close_range(slot_, trace_clock_ns());
  }
  nvtxRangePop();
}

// ---- the loop every chapter runs -----------------------------------------------------------------------------------

Trace profile(const Schedule& schedule, const std::string& range_name, const std::function<void()>& forward) {
  Profiler profiler(schedule);
  for (int k = 0; k < schedule.total_steps(); ++k) {
    profiler.begin_step(k);
    {
      Range range(range_name);
      forward();
    }
    // Each step ends with the GPU idle, so every step is measured from the same starting point.
    CUDA_CHECK(cudaDeviceSynchronize());
    profiler.end_step(k);
  }
  return profiler.take_trace();
}

}  // namespace ladder
