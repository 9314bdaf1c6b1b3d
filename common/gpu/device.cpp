#include "gpu/device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "gpu/check.h"
#include "gpu/random.h"

namespace ladder {

Tensor empty(const Shape& shape, DType dtype) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = contiguous_strides(shape);
  // Multiply in long double so that absurd shapes give the "does not fit" message below instead of overflowing.
  long double want = dtype_size(dtype);
  for (int64_t s : shape) {
    if (s < 0) throw Error("empty: negative size in " + shape_str(shape));
    want *= s;
  }
  const size_t bytes = want > 1e18L ? ~size_t{0} : t.nbytes();
  if (bytes == 0) return t;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Say what did not fit in words a reader can act on, instead of a bare cudaErrorMemoryAllocation.
  auto too_big = [&] {
    return Error(
        fmt::format("a {} {} tensor needs {:.2f} GiB but the GPU has only {:.2f} GiB free (of {:.2f} GiB); "
                    "use smaller sizes",
                    dtype_name(dtype), shape_str(shape), double(want) / 1073741824.0, free_bytes / 1073741824.0,
                    total_bytes / 1073741824.0));
  };
  if (bytes > free_bytes) throw too_big();
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free allocation error so later calls are not blamed for it
    throw too_big();
  }
  t.storage = std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
  t.data = p;
  return t;
}

void require_fits(const std::vector<Shape>& shapes, DType dtype) {
  long double want = 0;
  std::string all;
  for (const Shape& shape : shapes) {
    long double b = dtype_size(dtype);
    for (int64_t s : shape) b *= s;
    want += b;
    all += (all.empty() ? "" : " + ") + shape_str(shape);
  }
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (want > static_cast<long double>(free_bytes))
    throw Error(fmt::format(
        "{} {} tensors need {:.2f} GiB but the GPU has only {:.2f} GiB free (of {:.2f} GiB); "
        "use smaller sizes",
        dtype_name(dtype), all, double(want) / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0));
}

void poison(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("poison: expects a contiguous tensor");
  CUDA_CHECK(cudaMemset(t.data, 0xFF, t.nbytes()));
}

uint64_t checksum(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("checksum: expects a contiguous tensor");
  std::vector<unsigned char> bytes(t.nbytes());
  CUDA_CHECK(cudaMemcpy(bytes.data(), t.data, bytes.size(), cudaMemcpyDeviceToHost));
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

Tensor to_device(const std::vector<float>& values, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error(fmt::format("to_device: {} values for shape {}", values.size(), shape_str(shape)));
  if (dtype == DType::F32) {
    CUDA_CHECK(cudaMemcpy(t.data, values.data(), t.nbytes(), cudaMemcpyHostToDevice));
  } else {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bf16_bits(values[i]);
    CUDA_CHECK(cudaMemcpy(t.data, bits.data(), t.nbytes(), cudaMemcpyHostToDevice));
  }
  return t;
}

std::vector<float> to_host(const Tensor& t) {
  if (!t.is_contiguous()) throw Error("to_host: expects a contiguous tensor, got strides " + shape_str(t.strides));
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::F32) {
    CUDA_CHECK(cudaMemcpy(out.data(), t.data, t.nbytes(), cudaMemcpyDeviceToHost));
  } else {
    std::vector<uint16_t> bits(out.size());
    CUDA_CHECK(cudaMemcpy(bits.data(), t.data, t.nbytes(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_bits_to_float(bits[i]);
  }
  return out;
}

float random_value(uint64_t seed, int64_t i, DType dtype, float lo, float hi) {
  return round_to(dtype, uniform_at(seed, static_cast<uint64_t>(i), lo, hi));
}

std::vector<float> random_values(int64_t n, uint64_t seed, DType dtype, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = random_value(seed, i, dtype, lo, hi);
  return v;
}

namespace {
cudaStream_t g_stream = nullptr;  // nullptr is stream 0, the legacy default stream
}  // namespace

cudaStream_t current_stream() { return g_stream; }
void set_current_stream(cudaStream_t stream) { g_stream = stream; }

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

bool gpu_available() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) cudaGetLastError();
  return err == cudaSuccess && count > 0;
}

std::string reference_traces_dir() {
  // The source tree this binary was built from, when it is still there: a path that works from any folder.
#ifdef LADDER_SOURCE_DIR
  const std::filesystem::path dir = std::filesystem::path(LADDER_SOURCE_DIR) / "traces" / "reference" / "h100";
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return dir.string() + "/";
#endif
  return "traces/reference/h100/ in the ladder's source tree";
}

GpuInfo require_gpu() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    // With no GPU (or no driver) the runtime answers cudaErrorNoDevice or cudaErrorInsufficientDriver ("CUDA driver
    // version is insufficient"), which reads like advice to upgrade a driver on a machine that has no GPU at all. Say
    // what is true; name any other error, which does mean something else.
    const bool plain = err == cudaSuccess || err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver;
    throw Error(std::string("no CUDA GPU was found") + (plain ? "" : std::string(" (") + cudaGetErrorName(err) + ")") +
                    ". The traces we recorded on an H100, with what each chapter printed, are in " +
                    reference_traces_dir(),
                2);
  }
  int id = 0;
  CUDA_CHECK(cudaGetDevice(&id));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, id));
  GpuInfo g;
  g.id = id;
  g.name = p.name;
  g.major = p.major;
  g.minor = p.minor;
  g.sms = p.multiProcessorCount;
  g.total_mem = p.totalGlobalMem;
  g.l2_bytes = p.l2CacheSize;
  int mem_khz = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, id) == cudaSuccess) {
    // DDR: two transfers per clock; bus width in bits.
    g.peak_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;
  } else {
    cudaGetLastError();
  }
  return g;
}

}  // namespace ladder
