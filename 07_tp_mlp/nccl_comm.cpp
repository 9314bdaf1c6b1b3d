#include "07_tp_mlp/nccl_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "07_tp_mlp/stage.h"
#include "cuda/check.h"
#include "profiler/profiler.h"

namespace ch07 {

void check_nccl(ncclResult_t result, const char* expr, const char* file, int line) {
  if (result == ncclSuccess) return;
  std::string message = ncclGetErrorString(result);
  // NCCL keeps the reason of its last failure on this thread ("Duplicate GPU detected ..."): the useful half.
  if (const char* last = ncclGetLastError(nullptr); last && *last) message += std::string(": ") + last;
  ladder::throw_check("NCCL", message, expr, file, line);
}

std::string nccl_version() {
  int v = 0;
  NCCL_CHECK(ncclGetVersion(&v));
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9.
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

ncclUniqueId new_unique_id() {
  ncclUniqueId id{};
  NCCL_CHECK(ncclGetUniqueId(&id));
  return id;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Communicator::Communicator(const World& world, const ncclUniqueId& id, int blocks)
    : rank_(world.rank()), size_(world.size()) {
  group_.ranks = world.ranks();
  {
    ladder::Range range("nccl:init", ladder::Cat::UserAnnotation);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    if (blocks > 0) config.minCTAs = config.maxCTAs = blocks;
    // 1. A non-blocking communicator: its init waits for every rank, and finish() polls it under the deadline. Every
    // connection to a peer is made there, not at a collective's first call (where a blocking communicator would wait
    // for that peer unpolled); NCCL_RUNTIME_CONNECT set by the user wins.
    setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
    config.blocking = 0;
    ncclComm_t polled = nullptr;
    const ncclResult_t result = ncclCommInitRankConfig(&polled, size_, id, rank_, &config);
    set_comm(polled);
    on_stop([this] { abort(); });  // from here on, a rank that stops in the middle of the run aborts the communicator
    try {
      finish(result, "ncclCommInitRankConfig(...)", __FILE__, __LINE__);
      // 2. Its blocking copy (a split with one color), which makes every later call. A non-blocking communicator
      // launches each collective from a thread NCCL starts for it: outside the record_param_comms op that asked for
      // it, so the kernel would carry no args in the trace. The split is collective too, and polled the same way.
      config.blocking = 1;
      ncclComm_t copy = nullptr;
      finish(ncclCommSplit(polled, 0, rank_, &copy, &config), "ncclCommSplit(...)", __FILE__, __LINE__);
      finish(ncclCommFinalize(polled), "ncclCommFinalize(...)", __FILE__, __LINE__);
      set_comm(copy);
      ncclCommDestroy(polled);
    } catch (...) {
      on_stop(nullptr);  // finish() aborted it, and no destructor runs after a constructor throws
      throw;
    }
  }
  // Non-blocking: no implicit ordering with the legacy default stream. The highest priority: when the GEMMs of the
  // compute stream and a collective both have blocks waiting, the collective's get the free SMs first, so it is not
  // stretched behind a whole GEMM.
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
}

Communicator::~Communicator() {
  on_stop(nullptr);
  if (stream_) cudaStreamDestroy(stream_);
  // A run that ends well finalizes the communicator (every rank does, together: it waits for the peers, so under
  // the deadline); one that failed has aborted it already.
  try {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    for (const Window& w : windows_) {
      if (w.window && !aborted_)
        finish(ncclCommWindowDeregister(comm_, w.window), "ncclCommWindowDeregister(...)", __FILE__, __LINE__);
    }
#endif
    if (comm_ && !aborted_) {
      finish(ncclCommFinalize(comm_), "ncclCommFinalize(...)", __FILE__, __LINE__);
      ncclCommDestroy(comm_);
    }
  } catch (const std::exception&) {
    // finish() aborted the communicator: nothing is left to free, and a destructor says nothing
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  for (const Window& w : windows_) ncclMemFree(w.data);
#endif
}

void Communicator::set_comm(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm_mutex_);
  comm_ = comm;
}

void Communicator::abort() const {
  std::lock_guard<std::mutex> lock(comm_mutex_);  // a watchdog's abort never meets the swap of the init's copy
  // Under a blocking call stuck on a peer (a watchdog's abort, from its own thread), ncclCommAbort would corrupt NCCL's
  // state: the rank exits right after, and its GPU context goes with it.
  if (in_call_ > 0) return;
  if (comm_ && !aborted_.exchange(true)) ncclCommAbort(comm_);
}

ncclResult_t Communicator::call(const std::function<ncclResult_t()>& nccl) const {
  struct InCall {  // counted out on a throw too (a kernel launch's CUDA_CHECK_LAUNCH), or no abort() would run again
    std::atomic<int>& n;
    explicit InCall(std::atomic<int>& count) : n(count) { ++n; }
    ~InCall() { --n; }
  } in_call(in_call_);
  return nccl();
}

void Communicator::finish(ncclResult_t result, const char* expr, const char* file, int line) const {
  const auto start = std::chrono::steady_clock::now();
  // A call is done when the communicator says so: on a non-blocking one some calls return ncclSuccess while their
  // work still runs (NCCL 2.28's ncclCommSplit and ncclCommWindowRegister).
  const auto state = [this] {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(comm_, &async);
    return query != ncclSuccess ? query : async;
  };
  if (result == ncclSuccess) result = state();
  while (result == ncclInProgress) {
    if (seconds_since(start) > timeout_s()) {
      abort();
      throw WaitError(
          fmt::format("NCCL: `{}` at {}:{} did not finish within {:g} s (--timeout): a rank stopped, or "
                      "never reached it; the communicator was aborted",
                      expr, ladder::short_path(file), line, timeout_s()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    result = state();
  }
  if (result != ncclSuccess) {
    // The reason first (ncclGetLastError holds this thread's last one), then the abort, which may overwrite it.
    std::string message = ncclGetErrorString(result);
    if (const char* last = ncclGetLastError(comm_); last && *last) message += std::string(": ") + last;
    abort();
    ladder::throw_check("NCCL", message + " (the communicator was aborted)", expr, file, line);
  }
}

ladder::Tensor Communicator::window_tensor(const ladder::Shape& shape, ladder::DType dtype) {
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 27, 0)
  throw ladder::UsageError(fmt::format("NCCL windows need NCCL 2.27 or newer; this build has NCCL {}", nccl_version()));
#else
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const size_t bytes = std::max<size_t>(static_cast<size_t>(n) * ladder::dtype_size(dtype), 1);
  Window w;
  NCCL_CHECK(ncclMemAlloc(&w.data, bytes));
  windows_.push_back(w);  // freed by the destructor from here on
  finish(call([&] {
           return ncclCommWindowRegister(comm_, w.data, bytes, &windows_.back().window, NCCL_WIN_COLL_SYMMETRIC);
         }),
         "ncclCommWindowRegister(...)", __FILE__, __LINE__);
  return ladder::view_of(w.data, dtype, shape);
#endif
}

Communicator::WindowHandle Communicator::window_of(const ladder::Tensor& t) const {
  for (const Window& w : windows_)
    if (w.data == t.data) return w.window;
  throw ladder::Error("window_of: the tensor was not made by window_tensor() of this communicator");
}

namespace {

ncclDataType_t nccl_type(const ladder::Tensor& t) {
  switch (t.dtype) {
    case ladder::DType::BF16:
      return ncclBfloat16;
    case ladder::DType::F32:
      return ncclFloat32;
  }
  throw ladder::Error(fmt::format("NCCL: no NCCL type for a {} tensor", ladder::dtype_name(t.dtype)));
}
// The dtype as torch names it in record_param_comms's args.
const char* torch_type(const ladder::Tensor& t) {
  switch (t.dtype) {
    case ladder::DType::BF16:
      return "BFloat16";
    case ladder::DType::F32:
      return "Float";
  }
  throw ladder::Error(fmt::format("NCCL: no torch type for a {} tensor", ladder::dtype_name(t.dtype)));
}

// `part` and `whole` as a gather or a scatter over `ranks` ranks needs them.
void require_parts(const char* what, const ladder::Tensor& part, const ladder::Tensor& whole, int ranks) {
  if (!part.is_contiguous() || !whole.is_contiguous() || part.dtype != whole.dtype ||
      whole.numel() != part.numel() * ranks)
    throw ladder::Error(
        fmt::format("{}: expected contiguous tensors of one dtype, the whole {} times the part's {} "
                    "elements, got {}",
                    what, ranks, part.numel(), whole.numel()));
}

}  // namespace

void Communicator::recorded(const ladder::CollectiveCall& collective, const char* range,
                            const std::function<ncclResult_t()>& nccl, const char* expr, const char* file,
                            int line) const {
  ladder::Range op("record_param_comms", ladder::Cat::CpuOp);
  if (op.recorded()) op.record_args(ladder::record_param_comms_args(collective, group_));
  ladder::Range inner(range, ladder::Cat::UserAnnotation);
  finish(call(nccl), expr, file, line);
}

void Communicator::all_reduce_sum(const ladder::Tensor& t, cudaStream_t stream) const {
  if (!t.is_contiguous()) throw ladder::Error("all_reduce_sum: the tensor must be contiguous");
  recorded(
      {"allreduce", t.numel(), t.numel(), torch_type(t), rank_}, "nccl:all_reduce",
      [&] {
        return ncclAllReduce(t.data, t.data, static_cast<size_t>(t.numel()), nccl_type(t), ncclSum, comm_, stream);
      },
      "ncclAllReduce(...)", __FILE__, __LINE__);
}

void Communicator::all_gather(const ladder::Tensor& in, const ladder::Tensor& out) const {
  require_parts("all_gather", in, out, size_);
  recorded(
      {"_allgather_base", in.numel(), out.numel(), torch_type(in), rank_}, "nccl:_all_gather_base",
      [&] { return ncclAllGather(in.data, out.data, static_cast<size_t>(in.numel()), nccl_type(in), comm_, stream_); },
      "ncclAllGather(...)", __FILE__, __LINE__);
}

void Communicator::reduce_scatter_sum(const ladder::Tensor& in, const ladder::Tensor& out) const {
  require_parts("reduce_scatter_sum", out, in, size_);
  recorded(
      {"reduce_scatter_tensor", in.numel(), out.numel(), torch_type(in), rank_}, "nccl:_reduce_scatter_base",
      [&] {
        return ncclReduceScatter(in.data, out.data, static_cast<size_t>(out.numel()), nccl_type(in), ncclSum, comm_,
                                 stream_);
      },
      "ncclReduceScatter(...)", __FILE__, __LINE__);
}

void Communicator::sync() const {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // Only the communication stream can wait on a peer: once it is idle, the compute stream (which waits for it by
    // events, never the other way round at the end of a forward) finishes on its own.
    const cudaError_t done = cudaStreamQuery(stream_);
    if (done == cudaSuccess) {
      CUDA_CHECK(cudaDeviceSynchronize());
      return;
    }
    if (done != cudaErrorNotReady) CUDA_CHECK(done);
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      abort();
      throw ladder::Error(
          fmt::format("NCCL error: {} (reported while waiting for a collective; the communicator was aborted)",
                      ncclGetErrorString(async)));
    }
    if (seconds_since(start) > timeout_s()) {
      abort();
      throw WaitError(
          fmt::format("NCCL: a collective did not finish within {:g} s (--timeout): a rank stopped, or "
                      "never reached it; the communicator was aborted",
                      timeout_s()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace ch07
