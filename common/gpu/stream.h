// The stream every op and kernel launches on (like PyTorch's current stream), and CUDA graphs captured on one.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace ladder {

// The stream every op and kernel launches on, like PyTorch's current stream: the legacy default stream (0), except
// while CudaGraph captures a forward on a stream of its own.
cudaStream_t current_stream();
void set_current_stream(cudaStream_t stream);

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
