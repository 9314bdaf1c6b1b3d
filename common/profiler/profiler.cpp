// The profiler: host ranges we stamp ourselves, plus what CUPTI records on the GPU side (collector.cpp), joined into
// one `Trace` the way Kineto (PyTorch's profiler) joins them (builder.cpp).
//
// How the pieces fit:
//  - Each Range (a step, a forward, an op) stamps its start and end with trace_clock_ns(), the clock CUPTI stamps
//    its own records with, so host ranges and GPU activities share one time axis.
//  - While a range is open it pushes its id as a CUPTI "external correlation id". CUPTI then emits, for every API
//    call made meanwhile, a record mapping the call's correlation id to our id. Ops push on one stack, user ranges
//    on another: the first gives kernels their "External id", the second the span of a user range on the GPU lane.
//  - CUPTI hands records over in buffers, asynchronously and in no useful order, so they are only queued while the
//    program runs, and joined at the end by the builder.
#include "profiler/profiler.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "cuda/check.h"
#include "profiler/builder.h"
#include "profiler/collector.h"

namespace ladder {

namespace {

int64_t this_thread_id() { return static_cast<int64_t>(syscall(SYS_gettid)); }

std::string process_name() {
  std::ifstream f("/proc/self/comm");
  std::string name;
  std::getline(f, name);
  return name.empty() ? "ladder" : name;
}

DeviceProps device_props(int d, const cudaDeviceProp& p) {
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
  return dp;
}

}  // namespace

// ---- the profiler's state ----------------------------------------------------------------------------------------

struct Profiler::Impl {
  Schedule schedule;
  std::vector<cudaDeviceProp> props;  // per device, for the derived kernel args
  CuptiCollector collector;
  bool cupti_on = false;
  bool window_open = false;
  std::atomic<bool> recording{false};
  std::atomic<int64_t> next_id{1};  // External ids: one per recorded range, starting at 1 like torch's
  int64_t window_start = 0;
  std::unique_ptr<Range> step_range;  // ProfilerStep#k, open between begin_step and end_step
  bool built = false;
  Trace trace;

  // Host ranges, recorded from any thread.
  std::mutex host_mutex;
  std::vector<Event> host;
  std::unordered_map<int64_t, size_t> open;  // External id -> index in `host` of a range not closed yet
  std::vector<MemoryRecord> memory;          // the device allocator's allocations and frees (record_memory)

  int64_t open_range(const std::string& name, Cat cat) {
    Event e;
    e.cat = cat;
    e.name = name;
    e.pid = getpid();
    e.tid = this_thread_id();
    e.external_id = next_id++;
    e.dur_ns = -1;  // open
    e.ts_ns = trace_clock_ns();
    std::lock_guard<std::mutex> lock(host_mutex);
    open[e.external_id] = host.size();
    host.push_back(std::move(e));
    return host.back().external_id;
  }

  void set_inputs(int64_t id, std::vector<OpInput>&& inputs) {
    std::lock_guard<std::mutex> lock(host_mutex);
    auto it = open.find(id);
    if (it == open.end()) return;
    OpInputs all;
    for (OpInput& in : inputs) {
      all.dims.push_back(std::move(in.dims));
      all.types.push_back(std::move(in.type));
      all.strides.push_back(std::move(in.strides));
    }
    host[it->second].inputs = std::make_shared<const OpInputs>(std::move(all));
  }

  void set_args(int64_t id, std::vector<std::pair<std::string, std::string>>&& args) {
    std::lock_guard<std::mutex> lock(host_mutex);
    auto it = open.find(id);
    if (it == open.end()) return;
    host[it->second].extra_args =
        std::make_shared<const std::vector<std::pair<std::string, std::string>>>(std::move(args));
  }

  void close_range(int64_t id, int64_t end_ns) {
    std::lock_guard<std::mutex> lock(host_mutex);
    auto it = open.find(id);
    if (it == open.end()) return;  // opened during warmup and thrown away since
    host[it->second].dur_ns = std::max<int64_t>(0, end_ns - host[it->second].ts_ns);
    open.erase(it);
  }

  // Throws away what warmup recorded: its records carry one-time costs (module loading, cuBLAS heuristics) that
  // would make the first active step look nothing like the others.
  // Kineto flushes CUPTI here (cuptiActivityFlushAll) and drops what comes back. We only drop what has arrived and
  // let the capture window (records stamped before window_start are left out by the builder) drop the rest when it
  // arrives: measured on an H100, a flush here made the first active step about 2 ms slower than the next ones,
  // because CUPTI's first records after a flush pay for a fresh buffer, inside the step we want to show.
  void discard_warmup() {
    collector.discard();
    std::lock_guard<std::mutex> lock(host_mutex);
    host.clear();
    memory.clear();
    open.clear();
    // Ids restart with the kept steps, as in torch's traces (ProfilerStep#2 is External id 1). Late warmup records
    // cannot be confused with new ones: they are matched by CUPTI correlation id, which never repeats.
    next_id = 1;
  }

  void finish() {
    // Everything launched must have run before CUPTI can report it; this sync is recorded too (torch's last
    // cudaDeviceSynchronize, outside every step, is the same call).
    CUDA_CHECK(cudaDeviceSynchronize());
    const int64_t window_end = trace_clock_ns();
    recording = false;
    const Records records = collector.finish(props);
    std::vector<Event> ranges;
    std::vector<MemoryRecord> allocations;
    {
      std::lock_guard<std::mutex> lock(host_mutex);
      ranges = std::move(host);
      host.clear();
      open.clear();
      allocations = std::move(memory);
      memory.clear();
    }
    BuiltEvents built_events = build_events(records, std::move(ranges), window_start, window_end, kCorrelationIdBase);
    if (built_events.incomplete_records > 0) {
      throw Error("the profiler got " + std::to_string(built_events.incomplete_records) +
                  " GPU records without timestamps (CUPTI's device buffer ran short), so the trace would be missing "
                  "GPU work; profile fewer steps or a smaller run");
    }
    trace.events = std::move(built_events.events);
    // The allocator's records inside the window, as torch keeps them: the steps' allocations and frees.
    for (const MemoryRecord& m : allocations)
      if (m.ts_ns >= window_start && m.ts_ns <= window_end) trace.memory.push_back(m);
    trace.profile_memory = !trace.memory.empty();
    trace.window_start_ns = window_start;
    trace.window_end_ns = window_end;
    built = true;
  }
};

namespace {
std::atomic<Profiler::Impl*> g_impl{nullptr};
std::atomic<Profiler*> g_current{nullptr};
}  // namespace

// ---- Profiler ----------------------------------------------------------------------------------------------------

Profiler::Profiler(const Schedule& schedule) {
  if (schedule.wait < 0 || schedule.warmup < 0 || schedule.active < 1) {
    throw Error("profiler schedule needs wait >= 0, warmup >= 0 and active >= 1");
  }
  Profiler* expected = nullptr;
  if (!g_current.compare_exchange_strong(expected, this)) throw Error("only one Profiler can exist at a time");
  try {
    impl_ = std::make_unique<Impl>();  // attaches CUPTI
    impl_->schedule = schedule;
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    Trace& t = impl_->trace;
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp p{};
      CUDA_CHECK(cudaGetDeviceProperties(&p, d));
      impl_->props.push_back(p);
      t.devices.push_back(device_props(d, p));
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    t.metadata["cuda_driver_version"] = std::to_string(driver);
    t.metadata["cuda_runtime_version"] = std::to_string(runtime);
    t.metadata["cupti_version"] = std::to_string(cupti_version());
    t.pid = getpid();
    t.process_name = process_name();
    g_impl = impl_.get();
  } catch (...) {
    impl_.reset();
    g_current = nullptr;
    throw;
  }
}

Profiler::~Profiler() {
  impl_->step_range.reset();
  g_impl = nullptr;
  impl_.reset();  // stops CUPTI if an exception left it on, and detaches it
  g_current = nullptr;
}

Profiler* Profiler::current() { return g_current.load(); }

bool Profiler::recording() const { return impl_->recording.load(); }

void record_memory(int64_t addr, int64_t bytes, int64_t total_allocated, int64_t total_reserved, int device) {
  Profiler::Impl* im = g_impl.load();
  if (!im || !im->recording) return;
  MemoryRecord m;
  m.ts_ns = trace_clock_ns();
  m.bytes = bytes;
  m.tid = this_thread_id();
  m.addr = addr;
  m.total_allocated = total_allocated;
  m.total_reserved = total_reserved;
  m.device_type = 1;  // c10::DeviceType::CUDA
  m.device_id = device;
  std::lock_guard<std::mutex> lock(im->host_mutex);
  im->memory.push_back(m);
}

void Profiler::begin_step(int k) {
  Impl& im = *impl_;
  const StepAction action = step_action(im.schedule, k);
  if (action == StepAction::None) return;
  if (!im.cupti_on && !im.built) {
    im.cupti_on = true;
    im.collector.enable();
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
ExternalRecord::Stack stack_of(Cat cat) { return cat == Cat::CpuOp ? ExternalRecord::Op : ExternalRecord::UserRange; }

// Opens both faces of a range: the NVTX range (Nsight Systems shows it whether or not our profiler runs) and, while
// a profiler records, our own record, returning its External id (-1 when nothing records).
int64_t open_range(const std::string& name, Cat cat) {
  nvtxRangePushA(name.c_str());
  try {
    Profiler::Impl* im = g_impl.load();
    if (!im || !im->recording) return -1;
    const int64_t id = im->open_range(name, cat);
    // From here until the matching pop, every CUDA call on this thread is tagged with our id.
    push_external_id(stack_of(cat), id);
    return id;
  } catch (...) {
    nvtxRangePop();  // a constructor that throws gets no destructor call
    throw;
  }
}
}  // namespace

Range::Range(const std::string& name, Cat cat) : external_id_(open_range(name, cat)), cat_(cat) {}

void Range::record_inputs(std::vector<OpInput> inputs) {
  if (Profiler::Impl* im = g_impl.load(); im && external_id_ >= 0) im->set_inputs(external_id_, std::move(inputs));
}

void Range::record_args(std::vector<std::pair<std::string, std::string>> args) {
  if (Profiler::Impl* im = g_impl.load(); im && external_id_ >= 0) im->set_args(external_id_, std::move(args));
}

Range::~Range() {
  if (external_id_ >= 0) {
    pop_external_id(stack_of(cat_));
    if (Profiler::Impl* im = g_impl.load()) im->close_range(external_id_, trace_clock_ns());
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
