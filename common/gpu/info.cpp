#include "gpu/info.h"

#include <cuda_runtime_api.h>

#include "cuda/check.h"

namespace ladder {

bool gpu_available() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) cudaGetLastError();
  return err == cudaSuccess && count > 0;
}

GpuInfo require_gpu() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    // With no GPU (or no driver) the runtime answers cudaErrorNoDevice or cudaErrorInsufficientDriver ("CUDA driver
    // version is insufficient"), which reads like advice to upgrade a driver on a machine that has no GPU at all: say
    // what is true. Any other error is a GPU there and failing: not "no GPU", which tests take for a skip.
    if (err == cudaSuccess || means_no_gpu(err)) throw NoGpuError("no CUDA GPU was found");
    CUDA_CHECK(err);
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
