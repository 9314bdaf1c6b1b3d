// NCCL set up the way llm.c and NCCL's own examples do it: one process per GPU, rank 0's ncclUniqueId sent to every
// rank by MPI, ncclCommInitRankConfig, and a communication stream of its own that waits for the compute stream by
// events. The init waits for every rank, so it runs on a non-blocking communicator (ncclConfig_t.blocking = 0): the
// call returns at once, and this code polls ncclCommGetAsyncError until it is done, an error comes, or the run's
// deadline (stage.h's timeout_s) passes; then it aborts the communicator (ncclCommAbort ends its kernels) and throws.
// Every later call runs on a blocking copy of it, whose init made every connection (NCCL_RUNTIME_CONNECT=0): it
// launches each collective's kernel from the calling thread, as PyTorch's default communicator does. Its collectives
// wait for a peer on the GPU, where sync() polls them; the calls that wait for every rank on the host (a window's
// registration, the device communicator's creation) run under the watchdog (stage.h).
// Every collective is recorded as PyTorch records it: a cpu_op `record_param_comms` with torch's collective args
// around a user range `nccl:all_reduce`, so each rank's trace reads like one torch.profiler wrote (profiler/comms.h).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "07_tp_mlp/world.h"
#include "gpu/tensor.h"
#include "profiler/comms.h"

namespace ch07 {

// A failed NCCL call as one line naming it: "NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details):
// Duplicate GPU detected ... in `ncclCommInitRank(...)` at 07_tp_mlp/nccl_comm.cpp:40".
void check_nccl(ncclResult_t result, const char* expr, const char* file, int line);
#define NCCL_CHECK(expr) ::ch07::check_nccl((expr), #expr, __FILE__, __LINE__)

// "2.28.3": the version of the NCCL library this process loaded.
std::string nccl_version();

// A new ncclUniqueId (rank 0 makes it, MPI sends it to every rank). NCCL finds this host's network interfaces here,
// so this is where a machine NCCL cannot bootstrap on fails.
ncclUniqueId new_unique_id();

class Communicator {
 public:
  // Collective: every rank of `world` calls it with rank 0's id, each with its own GPU current. `blocks` > 0: every
  // collective runs on that many blocks (ncclConfig_t's minCTAs and maxCTAs; else NCCL chooses: 24 for its ring on
  // four H100s, 7 for its symmetric all-reduce, fewer than the links need). While it lives, a rank that stops in the
  // middle of the run aborts it first (stage.h's on_stop).
  Communicator(const World& world, const ncclUniqueId& id, int blocks = 0);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  cudaStream_t stream() const { return stream_; }  // the communication stream
  int rank() const { return rank_; }
  int size() const { return size_; }
  const ladder::ProcessGroup& group() const { return group_; }

  // A tensor in memory NCCL allocates (ncclMemAlloc) and registers on every rank as a symmetric window
  // (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC). A collective whose buffers lie in such windows, at the same
  // offsets on every rank, may run NCCL's symmetric kernels (ncclSymkDevKernel_*): each rank loads its peers' parts
  // and stores the results into their memory directly over NVLink, on a few blocks, instead of passing chunks around
  // a ring on 24. Collective: every rank calls it with the same shape. Freed with the communicator.
  ladder::Tensor window_tensor(const ladder::Shape& shape, ladder::DType dtype);

  // t = the sum of every rank's t, in place (bf16 or float32, contiguous), on `stream` (the communication stream
  // unless told otherwise), inside record_param_comms { nccl:all_reduce { ncclAllReduce } }.
  void all_reduce_sum(const ladder::Tensor& t, cudaStream_t stream) const;
  void all_reduce_sum(const ladder::Tensor& t) const { all_reduce_sum(t, stream_); }
  // out = every rank's `in`, one after the other in rank order (out holds size() times in's elements), on the
  // communication stream, inside record_param_comms { nccl:_all_gather_base { ncclAllGather } }, as torch's
  // all_gather_into_tensor records it.
  void all_gather(const ladder::Tensor& in, const ladder::Tensor& out) const;
  // out = this rank's part of the sum of every rank's `in` (part r: elements [r*n, (r+1)*n) of the sum, n = out's
  // elements), on the communication stream, inside record_param_comms { nccl:_reduce_scatter_base
  // { ncclReduceScatter } }, as torch's reduce_scatter_tensor records it.
  void reduce_scatter_sum(const ladder::Tensor& in, const ladder::Tensor& out) const;

  // Waits until every stream of this GPU is idle, like cudaDeviceSynchronize, but never forever: it polls NCCL's
  // asynchronous error state, and when NCCL reports an error or the wait passes the deadline (a peer that stopped or
  // never joins), it aborts the communicator and throws (a WaitError for the deadline).
  void sync() const;

  // ncclCommAbort, once: NCCL's kernels end and no call of this communicator waits any more. Any thread may call it;
  // it does nothing while another thread is inside call() (that rank is about to exit).
  void abort() const;
  bool aborted() const { return aborted_; }

  // For NCCL calls made elsewhere (peer_slots.cu's device API): the communicator, and the window that holds a tensor
  // window_tensor() made.
  ncclComm_t handle() const { return comm_; }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  using WindowHandle = ncclWindow_t;
#else
  using WindowHandle = void*;  // NCCL before 2.27 has no windows (window_tensor refuses)
#endif
  WindowHandle window_of(const ladder::Tensor& t) const;

  // Makes one NCCL call of this communicator (`nccl`), which may wait for a peer: while it runs, an abort() from
  // another thread leaves the communicator alone.
  ncclResult_t call(const std::function<ncclResult_t()>& nccl) const;
  // Polls ncclCommGetAsyncError until the communicator's last call (`result`, the call `expr` at file:line) is done:
  // returns when it succeeded; aborts the communicator and throws when it failed or the deadline passed.
  void finish(ncclResult_t result, const char* expr, const char* file, int line) const;
  // Runs `nccl` (one NCCL call, or a launch of a kernel that communicates; `expr` its text for an error, at file:line
  // of the caller) inside what torch records around a collective: a cpu_op record_param_comms with the call's args,
  // and the user range `range`.
  void recorded(const ladder::CollectiveCall& collective, const char* range, const std::function<ncclResult_t()>& nccl,
                const char* expr, const char* file, int line) const;

 private:
  struct Window {
    void* data = nullptr;
    WindowHandle window = nullptr;
  };
  void set_comm(ncclComm_t comm);  // under comm_mutex_, which abort() takes too

  std::vector<Window> windows_;
  ncclComm_t comm_ = nullptr;
  mutable std::mutex comm_mutex_;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0, size_ = 1;
  ladder::ProcessGroup group_;
  mutable std::atomic<bool> aborted_{false};
  mutable std::atomic<int> in_call_{0};  // NCCL calls under way (call())
};

}  // namespace ch07
