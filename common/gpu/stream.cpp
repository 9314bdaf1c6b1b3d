#include "gpu/stream.h"

#include "cuda/check.h"

namespace ladder {

namespace {
cudaStream_t g_stream = nullptr;  // nullptr is stream 0, the legacy default stream
int g_gemm_sms = 0;               // 0: every SM
}  // namespace

cudaStream_t current_stream() { return g_stream; }
void set_current_stream(cudaStream_t stream) { g_stream = stream; }

int gemm_sm_limit() { return g_gemm_sms; }
GemmSmLimit::GemmSmLimit(int sms) : previous_(g_gemm_sms) { g_gemm_sms = sms; }
GemmSmLimit::~GemmSmLimit() { g_gemm_sms = previous_; }

CudaGraph::CudaGraph(const std::function<void()>& forward) {
  // The legacy default stream cannot be captured, so the forward runs once on a stream of its own while capture
  // records, instead of executing, everything launched on it.
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const cudaStream_t previous = current_stream();
  set_current_stream(s);
  try {
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    forward();
    CUDA_CHECK(cudaStreamEndCapture(s, &graph_));
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(s, &partial);
    if (partial) cudaGraphDestroy(partial);
    set_current_stream(previous);
    cudaStreamDestroy(s);
    throw;
  }
  set_current_stream(previous);
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

CudaGraph::~CudaGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CudaGraph::launch() const { CUDA_CHECK(cudaGraphLaunch(exec_, current_stream())); }

}  // namespace ladder
