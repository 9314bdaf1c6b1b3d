#include <cuda_bf16.h>
#include <fmt/format.h>

#include "07_tp_mlp/peer_slots.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/stream.h"

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#include <nccl_device.h>
#define LADDER_NCCL_DEVICE_API 1
#endif

namespace ch07 {

namespace {

constexpr int kBlocks = 128, kThreads = 512;  // the reduction's grid: 128 blocks, one LSA barrier each

// out[i] = the sum over s of inbox[s * n + i], for the n elements of out (a multiple of 8): float32 sums in slot
// order, rounded once to bf16. The grid's threads take 8 elements (16 bytes) at a time.
__device__ void add_slots(const __nv_bfloat16* inbox, __nv_bfloat16* out, int64_t n, int slots) {
  for (int64_t v = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; v < n / 8; v += int64_t{gridDim.x} * blockDim.x) {
    float sum[8] = {};
    for (int s = 0; s < slots; ++s) {
      const uint4 raw = reinterpret_cast<const uint4*>(inbox + s * n)[v];
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        sum[2 * k] += f.x;
        sum[2 * k + 1] += f.y;
      }
    }
    uint4 packed;
    __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
    for (int k = 0; k < 4; ++k) pairs[k] = __floats2bfloat162_rn(sum[2 * k], sum[2 * k + 1]);
    reinterpret_cast<uint4*>(out)[v] = packed;
  }
}

#ifdef LADDER_NCCL_DEVICE_API
// Where this rank's slot lies in each rank's inbox (slot `rank`, at byte `offset` of the window): the LSA pointers
// NCCL maps for this GPU, read once by one thread each.
__global__ void lsa_pointers_kernel(ncclWindow_t window, size_t offset, int ranks, void** out) {
  if (static_cast<int>(threadIdx.x) < ranks) out[threadIdx.x] = ncclGetLsaPointer(window, offset, threadIdx.x);
}
#endif

}  // namespace

}  // namespace ch07

#ifndef LADDER_NCCL_DEVICE_API
struct ncclDevComm {};  // no device API: one rank only (peer_slots_cannot_run refuses more)
#endif

// The reduction. Outside the namespace, with a name that begins with "nccl" and holds "Kernel": that is how
// ladder-trace (trace/analyses/communication.h) and HolisticTraceAnalysis tell a communication kernel from a compute
// one, and this kernel is the reduce-scatter's, built on NCCL's device API. One block per LSA barrier.
//   First barrier (peers only): every rank's blocks arrive after their GEMMs wrote into the slots (release), and
//   each waits for all (acquire): from here on this rank's slots hold every part.
//   The sum (add_slots): 8 bf16 a thread per load, slot 0 first, in float32, rounded once to bf16 (for two
//   ranks this is NCCL's own bf16 sum, round(a + b), bit for bit).
//   Second barrier: every rank has read its slots, so no rank's next GEMM writes into a slot still being read.
__global__ void __launch_bounds__(ch07::kThreads)
    ncclLadderReduceSlotsKernel(ncclDevComm dev, bool peers, const __nv_bfloat16* inbox, __nv_bfloat16* out, int64_t n,
                                int slots) {
  if (!peers) {  // one rank, or sum_slots: nothing to wait for
    ch07::add_slots(inbox, out, n, slots);
    return;
  }
#ifdef LADDER_NCCL_DEVICE_API
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dev, ncclTeamTagLsa(), blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  ch07::add_slots(inbox, out, n, slots);
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
#endif
}

namespace ch07 {

struct PeerSlots::Device {
  ncclDevComm dev{};
  bool made = false;
};

void sum_slots(const ladder::Tensor& inbox, int slots, const ladder::Tensor& out, cudaStream_t stream) {
  if (!inbox.is_contiguous() || !out.is_contiguous() || inbox.dtype != ladder::DType::BF16 ||
      out.dtype != ladder::DType::BF16 || out.numel() % 8 != 0 || inbox.numel() != slots * out.numel())
    throw ladder::Error(
        fmt::format("sum_slots: expected contiguous bf16 tensors, {} slots of the output's {} elements "
                    "(a multiple of 8), got {}",
                    slots, out.numel(), inbox.numel()));
  ncclLadderReduceSlotsKernel<<<kBlocks, kThreads, 0, stream>>>(
      ncclDevComm{}, false, static_cast<const __nv_bfloat16*>(inbox.data), static_cast<__nv_bfloat16*>(out.data),
      out.numel(), slots);
  CUDA_CHECK_LAUNCH();
}

std::string peer_slots_cannot_run(const Communicator&) {
#ifdef LADDER_NCCL_DEVICE_API
  return "";
#else
  return fmt::format("--mode fused needs NCCL's device API (NCCL 2.28 or newer); this build has NCCL {}",
                     nccl_version());
#endif
}

PeerSlots::PeerSlots(Communicator& comm, int64_t rows, int64_t dim)
    : comm_(comm), rows_(rows), dim_(dim), device_(std::make_unique<Device>()) {
  if (const std::string why = peer_slots_cannot_run(comm); !why.empty()) throw ladder::UsageError(why);
  if (dim % 8 != 0) throw ladder::Error(fmt::format("PeerSlots: dim = {} is not a multiple of 8", dim));
  const int ranks = comm.size();
  if (ranks == 1) {  // no peer: the inbox is this rank's own memory (NCCL gives a one-rank communicator no LSA team)
    inbox_ = ladder::empty({rows, dim}, ladder::DType::BF16);
    to_.push_back(inbox_);
    return;
  }
#ifdef LADDER_NCCL_DEVICE_API
  inbox_ = comm.window_tensor({ranks * rows, dim}, ladder::DType::BF16);
  ncclDevCommRequirements reqs{};
#ifdef NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;  // NCCL 2.29 on: a versioned struct
#endif
  reqs.lsaBarrierCount = kBlocks;
  try {
    comm.finish(comm.call([&] { return ncclDevCommCreate(comm.handle(), &reqs, &device_->dev); }),
                "ncclDevCommCreate(...)", __FILE__, __LINE__);
  } catch (const ladder::Error& e) {
    throw ladder::UsageError(
        fmt::format("--mode fused: NCCL made no device communicator: these ranks' GPUs must "
                    "load and store each other's memory (NVLink, or PCIe peer to peer). {}",
                    e.what()));
  }
  device_->made = true;
  if (const int lsa = ncclTeamLsa(device_->dev).nRanks; lsa != ranks)
    throw ladder::UsageError(
        fmt::format("--mode fused: every rank's GPU must load and store the others' memory (one NVLink or PCIe P2P "
                    "domain), and NCCL finds {} of the {} ranks in rank {}'s",
                    lsa, ranks, comm.rank()));
  void** device_pointers = nullptr;
  CUDA_CHECK(cudaMalloc(&device_pointers, ranks * sizeof(void*)));
  const size_t offset = static_cast<size_t>(comm.rank() * rows * dim) * sizeof(__nv_bfloat16);
  lsa_pointers_kernel<<<1, 32 * ((ranks + 31) / 32)>>>(comm.window_of(inbox_), offset, ranks, device_pointers);
  CUDA_CHECK_LAUNCH();
  std::vector<void*> owners(static_cast<size_t>(ranks));
  const cudaError_t copied = cudaMemcpy(owners.data(), device_pointers, ranks * sizeof(void*), cudaMemcpyDeviceToHost);
  CUDA_CHECK(cudaFree(device_pointers));
  CUDA_CHECK(copied);
  for (void* p : owners) to_.push_back(ladder::view_of(p, ladder::DType::BF16, {rows, dim}));
#endif
}

PeerSlots::~PeerSlots() {
#ifdef LADDER_NCCL_DEVICE_API
  // A run that failed has aborted the communicator: nothing of it is left to destroy.
  if (device_ && device_->made && !comm_.aborted()) ncclDevCommDestroy(comm_.handle(), &device_->dev);
#endif
}

void PeerSlots::reduce(const ladder::Tensor& out) const {
  if (!out.is_contiguous() || out.dtype != ladder::DType::BF16 || out.numel() != rows_ * dim_)
    throw ladder::Error(
        fmt::format("PeerSlots::reduce: expected a contiguous bf16 tensor of {} x {} elements", rows_, dim_));
  const int ranks = comm_.size();
  comm_.recorded(
      {"reduce_scatter_tensor", ranks * rows_ * dim_, rows_ * dim_, "BFloat16", comm_.rank()},
      "nccl:_reduce_scatter_base",
      [&] {
        ncclLadderReduceSlotsKernel<<<kBlocks, kThreads, 0, comm_.stream()>>>(
            device_->dev, ranks > 1, static_cast<const __nv_bfloat16*>(inbox_.data),
            static_cast<__nv_bfloat16*>(out.data), rows_ * dim_, ranks);
        CUDA_CHECK_LAUNCH();
        return ncclSuccess;
      },
      "ncclLadderReduceSlotsKernel<<<...>>>", __FILE__, __LINE__);
}

}  // namespace ch07
