// Device memory, host<->device copies, and the GPU the chapter runs on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu/tensor.h"

namespace ladder {

// Allocates an uninitialized contiguous tensor on the current GPU. A shape that does not fit in the GPU's free memory
// throws a ladder::Error that says how much was asked for and how much is free (never a crash).
Tensor empty(const Shape& shape, DType dtype);

// Checks up front that tensors of these shapes fit in the GPU's free memory together, before any host data is made
// for them; throws the same clear error as empty() otherwise.
void require_fits(const std::vector<Shape>& shapes, DType dtype);

// Fill a tensor's bytes with 0xFF: NaN in both float32 and bf16, so an element a kernel forgot to write fails the
// check.
void poison(const Tensor& t);

// Host values are float: every bf16 value is exactly a float, so nothing is lost on the way back.
Tensor to_device(const std::vector<float>& values, const Shape& shape, DType dtype);
std::vector<float> to_host(const Tensor& t);  // contiguous tensors only

// FNV-1a over a tensor's bytes: two runs that print the same checksum produced bit-identical outputs.
uint64_t checksum(const Tensor& t);

// Seeded uniform values in [lo, hi), already rounded to `dtype`, so the CPU reference sees exactly what the GPU sees.
// Element i depends only on (seed, i) (gpu/random.h), so the three below agree: random_tensor makes a whole tensor on
// the GPU in one kernel (no host copy, whatever its size), and the CPU recomputes just the elements it checks.
float random_value(uint64_t seed, int64_t i, DType dtype, float lo = -1.0f, float hi = 1.0f);
std::vector<float> random_values(int64_t n, uint64_t seed, DType dtype, float lo = -1.0f, float hi = 1.0f);
Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype, float lo = -1.0f, float hi = 1.0f);

// How many elements of a contiguous tensor are NaN or Inf, and the index of the first; counted on the GPU, so a check
// covers every element of an output too large to copy to the host.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1;
};
NonFinite count_nonfinite(const Tensor& t);
// The values of a contiguous tensor at the given flat indices, gathered on the GPU.
std::vector<float> values_at(const Tensor& t, const std::vector<int64_t>& flat);

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

struct GpuInfo {
  int id = 0;
  std::string name;
  int major = 0, minor = 0;
  int sms = 0;
  size_t total_mem = 0;
  double peak_bandwidth_gbs = 0;  // from memory clock and bus width: a datasheet figure, labelled as such
  int l2_bytes = 0;
};

// Where the committed reference traces are, as a path that works from the current folder: absolute when the source
// tree the binary was built from is still there.
std::string reference_traces_dir();

// True when the CUDA runtime sees at least one GPU.
bool gpu_available();
// The current GPU's properties. Throws a ladder::Error with exit code 2 and one sentence when there is no GPU.
GpuInfo require_gpu();

}  // namespace ladder
