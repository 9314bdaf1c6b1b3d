// CUPTI's activity API, as Kineto drives it: buffers handed over asynchronously on CUPTI's own thread, plain copies
// of each record kept under a lock, a forced flush at the end, and a check that nothing was dropped.
#include "profiler/collector.h"

#include <cuda_occupancy.h>
#include <cupti.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cuda/check.h"

namespace ladder {

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

uint32_t cupti_version() {
  uint32_t v = 0;
  cuptiGetVersion(&v);
  return v;
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

// 4 MB per buffer, 8-byte aligned as CUPTI requires (its docs recommend 1 to 10 MB).
constexpr size_t kBufferBytes = 4 * 1024 * 1024;

// The sink the CUPTI buffer callbacks append to. CUPTI calls them from its own thread, possibly after a collector is
// gone, so they go through this lock-protected pointer.
std::mutex g_sink_mutex;
Records* g_sink = nullptr;
std::atomic<size_t> g_dropped{0};
std::atomic<bool> g_live{false};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

const char* memcpy_kind_name(int kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "Unknown";
  }
}

const char* memory_kind_name(int kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

// The fields every GPU activity record has, whichever struct it comes in.
template <class R>
GpuRecord gpu_record(Cat cat, const R* r) {
  GpuRecord g;
  g.cat = cat;
  g.start_ns = r->start;
  g.end_ns = r->end;
  g.correlation = r->correlationId;
  g.args.device = static_cast<int>(r->deviceId);
  g.args.context = static_cast<int>(r->contextId);
  g.args.stream = static_cast<int>(r->streamId);
  return g;
}

void parse_record(const CUpti_Activity* rec, Records& out) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const KernelRecord*>(rec);
      GpuRecord g = gpu_record(Cat::Kernel, k);
      g.name = k->name ? k->name : "";
      g.args.grid[0] = k->gridX, g.args.grid[1] = k->gridY, g.args.grid[2] = k->gridZ;
      g.args.block[0] = k->blockX, g.args.block[1] = k->blockY, g.args.block[2] = k->blockZ;
      g.args.registers_per_thread = k->registersPerThread;
      g.args.shared_memory = k->staticSharedMemory + k->dynamicSharedMemory;
      g.dynamic_shared_memory = k->dynamicSharedMemory;
      out.gpu.push_back(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const MemcpyRecord*>(rec);
      GpuRecord g = gpu_record(Cat::GpuMemcpy, m);
      g.args.bytes = static_cast<int64_t>(m->bytes);
      g.name = std::string("Memcpy ") + memcpy_kind_name(m->copyKind) + " (" + memory_kind_name(m->srcKind) +
               " -> " + memory_kind_name(m->dstKind) + ")";
      out.gpu.push_back(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const MemsetRecord*>(rec);
      GpuRecord g = gpu_record(Cat::GpuMemset, m);
      g.args.bytes = static_cast<int64_t>(m->bytes);
      g.name = std::string("Memset (") + memory_kind_name(m->memoryKind) + ")";
      out.gpu.push_back(std::move(g));
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      ApiRecord r;
      r.driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      r.cbid = a->cbid;
      r.pid = a->processId;
      r.tid = a->threadId;
      r.correlation = a->correlationId;
      r.start_ns = a->start;
      r.end_ns = a->end;
      out.api.push_back(r);  // named in finish(): a lookup per record has no place on CUPTI's thread
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      ExternalRecord e;
      e.stack = x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 ? ExternalRecord::Op
                                                                          : ExternalRecord::UserRange;
      e.id = static_cast<int64_t>(x->externalId);
      e.correlation = x->correlationId;
      out.ext.push_back(e);
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
    if (g_sink) {
      g_sink->api.insert(g_sink->api.end(), parsed.api.begin(), parsed.api.end());
      g_sink->gpu.insert(g_sink->gpu.end(), std::make_move_iterator(parsed.gpu.begin()),
                         std::make_move_iterator(parsed.gpu.end()));
      g_sink->ext.insert(g_sink->ext.end(), parsed.ext.begin(), parsed.ext.end());
    }
  }
  std::free(buffer);
  // Asked outside our lock on purpose: CUPTI takes its own lock here, and holding ours meanwhile can deadlock
  // against a thread that holds CUPTI's lock and waits for ours (Kineto hit exactly this).
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
}

// One line saying the profiler could not start and why, with a hint for the two usual causes.
void start_call(const char* call, CUptiResult r) {
  if (r == CUPTI_SUCCESS) return;
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
#define START_CUPTI(expr) start_call(#expr, (expr))

// Activity kinds we enable. CONCURRENT_KERNEL, never KIND_KERNEL: the header warns that KIND_KERNEL serializes all
// kernels, which would change the very timeline we want to show.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
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

std::string callback_name(bool driver, uint32_t cbid) {
  static std::map<std::pair<bool, uint32_t>, std::string> cache;  // finish() runs on one thread at a time
  auto it = cache.find({driver, cbid});
  if (it != cache.end()) return it->second;
  const char* raw = nullptr;
  std::string name;
  if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &raw) ==
          CUPTI_SUCCESS &&
      raw) {
    name = raw;
  } else {
    name = std::string(driver ? "driver" : "runtime") + " cbid " + std::to_string(cbid);
  }
  return cache[{driver, cbid}] = name;
}

// Kineto's derived kernel args. How many blocks each SM gets if the grid is spread evenly, and how many warps that
// is: below 1 block per SM, part of the GPU sits idle for the whole kernel. The occupancy calculator says how many
// blocks of this size, registers and shared memory fit on one SM at a time; the estimate is the fraction of the SM's
// thread slots those blocks fill, capped by the blocks the grid gives each SM. Like Kineto, it assumes the default
// shared-memory limit, so a kernel that opted in to more (cuBLAS's large tiles) gets 0.
void fill_kernel_args(const cudaDeviceProp& p, int dynamic_smem, GpuArgs& g) {
  const int static_smem = g.shared_memory - dynamic_smem;
  const int block_size = g.block[0] * g.block[1] * g.block[2];
  const double blocks = static_cast<double>(g.grid[0]) * g.grid[1] * g.grid[2];
  if (p.multiProcessorCount <= 0 || block_size <= 0) return;
  g.blocks_per_sm = blocks / p.multiProcessorCount;
  g.warps_per_sm = g.blocks_per_sm * block_size / (p.warpSize > 0 ? p.warpSize : 32);
  cudaOccDeviceProp occ_prop(p);
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = p.maxThreadsPerBlock;
  attr.numRegs = g.registers_per_thread;
  attr.sharedSizeBytes = static_cast<size_t>(static_smem);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
  attr.maxDynamicSharedSizeBytes = 0;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult result{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &occ_prop, &attr, &state, block_size,
                                              static_cast<size_t>(dynamic_smem)) == CUDA_OCC_SUCCESS &&
      p.maxThreadsPerMultiProcessor > 0) {
    const double active = std::min<double>(result.activeBlocksPerMultiprocessor, g.blocks_per_sm);
    g.est_occupancy_pct = static_cast<int>(std::lround(100.0 * active * block_size / p.maxThreadsPerMultiProcessor));
  }
}

CUpti_ExternalCorrelationKind kind_of(ExternalRecord::Stack stack) {
  return stack == ExternalRecord::Op ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
}

}  // namespace

void push_external_id(ExternalRecord::Stack stack, int64_t id) {
  CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kind_of(stack), static_cast<uint64_t>(id)));
}

void pop_external_id(ExternalRecord::Stack stack) {
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(kind_of(stack), &last);  // called from destructors: must not throw
}

CuptiCollector::CuptiCollector() {
  bool expected = false;
  if (!g_live.compare_exchange_strong(expected, true)) throw Error("only one profiler can record at a time");
  try {
    // Thread ids as the OS numbers them (gettid), the ids our host ranges use, instead of pthread_self()'s bits.
    START_CUPTI(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
    START_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  } catch (...) {
    g_live = false;
    throw;
  }
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = new Records();
  g_dropped = 0;
}

CuptiCollector::~CuptiCollector() {
  if (on_) {
    // Left early (an exception mid-run): stop CUPTI and let it hand back its buffers before the sink goes away.
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    delete g_sink;
    g_sink = nullptr;
  }
  // Detach. A subscribed CUPTI keeps a cost on every later CUDA call (measured on an H200: 12.7-13.7 us per forward
  // after profiling against 10.9 us after cuptiFinalize), the slowdown PyTorch fixed by tearing CUPTI down too
  // (pytorch/pytorch#146604). A later collector attaches CUPTI afresh.
  cuptiFinalize();
  g_live = false;
}

void CuptiCollector::enable() {
  on_ = true;  // set first, so that a failure half-way is still undone by the destructor
  for (CUpti_ActivityKind k : kKinds) START_CUPTI(cuptiActivityEnable(k));
  // The header says cuptiActivityEnableDriverApi(cbid, 1) alone records just those calls, but with CUDA 13.0 on an
  // H100 (driver 580) it recorded nothing, and the nvjet kernels lost their launch and their External id. What works:
  // turn the whole driver kind on, then every driver call but the launches off again (the builder also keeps only
  // the launches, should some other call slip through).
  START_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    if (std::find(std::begin(kDriverLaunches), std::end(kDriverLaunches), cbid) == std::end(kDriverLaunches)) {
      cuptiActivityEnableDriverApi(cbid, 0);  // ids the driver lacks are refused: fine
    }
  }
}

void CuptiCollector::discard() {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink) *g_sink = Records{};
}

Records CuptiCollector::finish(const std::vector<cudaDeviceProp>& props) {
  // FORCED also hands over buffers that are not full yet; without it the last records would stay inside CUPTI.
  const CUptiResult flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  on_ = false;
  CUPTI_CHECK(flush);
  if (const size_t dropped = g_dropped.exchange(0); dropped > 0) {
    throw Error("the profiler lost " + std::to_string(dropped) +
                " CUPTI records (its buffers were full or returned too late), so the trace would be missing GPU "
                "work; profile fewer steps or a smaller run");
  }
  Records out;
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    std::swap(out, *g_sink);
  }
  for (ApiRecord& r : out.api) r.name = callback_name(r.driver, r.cbid);
  for (GpuRecord& g : out.gpu) {
    if (g.cat == Cat::Kernel && g.args.device >= 0 && static_cast<size_t>(g.args.device) < props.size()) {
      fill_kernel_args(props[g.args.device], g.dynamic_shared_memory, g.args);
    }
  }
  return out;
}

}  // namespace ladder
