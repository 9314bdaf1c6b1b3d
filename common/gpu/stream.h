// The stream every op and kernel launches on (like PyTorch's current stream), and CUDA graphs captured on one.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace ladder {

// The stream every op and kernel launches on, like PyTorch's current stream: the legacy default stream (0), except
// while CudaGraph captures a forward on a stream of its own.
cudaStream_t current_stream();
void set_current_stream(cudaStream_t stream);

// How many SMs a GEMM may spread over: 0, all of them, unless a GemmSmLimit is alive. cuBLASLt gets it as
// CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET and 04's persistent kernels size their grid by it, so a GEMM launched under it
// leaves the other SMs free for a kernel of another stream to start beside it (07_tp_mlp leaves them to NCCL's).
int gemm_sm_limit();
class GemmSmLimit {
 public:
  explicit GemmSmLimit(int sms);  // 0: no limit
  ~GemmSmLimit();
  GemmSmLimit(const GemmSmLimit&) = delete;
  GemmSmLimit& operator=(const GemmSmLimit&) = delete;

 private:
  int previous_;
};

// One forward captured into a CUDA graph (--graph): replaying it issues every kernel of the forward with a single
// cudaGraphLaunch, so the CPU lane loses the ops and launches, and the GPU lane keeps the same kernels.
class CudaGraph {
 public:
  explicit CudaGraph(const std::function<void()>& forward);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  void launch() const;  // on the current stream

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ladder
