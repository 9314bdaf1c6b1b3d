// The one line a failed CUDA call prints: the error's name, the call, and where it is in the project. No GPU needed:
// the runtime names its errors without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "cuda/check.h"

namespace ladder {
namespace {

std::string message_of(int status, const char* file) {
  try {
    check_cuda(status, "cudaMalloc(&p, bytes)", file, 42);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaCheck, SuccessDoesNotThrow) { EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess)); }

TEST(CudaCheck, NamesTheErrorTheCallAndTheProjectPath) {
  EXPECT_EQ(message_of(cudaErrorMemoryAllocation, "/home/me/ladder/common/gpu/memory.cpp"),
            "CUDA error: out of memory (cudaErrorMemoryAllocation) in `cudaMalloc(&p, bytes)` at "
            "common/gpu/memory.cpp:42");
}

// What a GPU test may skip on: no device, no driver, the driver's stub. A GPU that is there and failing is a failure.
TEST(CudaCheck, OnlyAMissingGpuOrDriverMeansNoGpu) {
  for (cudaError_t e : {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary})
    EXPECT_TRUE(means_no_gpu(e)) << cudaGetErrorName(e);
  for (cudaError_t e : {cudaSuccess, cudaErrorDevicesUnavailable, cudaErrorECCUncorrectable, cudaErrorSystemNotReady,
                        cudaErrorSystemDriverMismatch, cudaErrorInitializationError})
    EXPECT_FALSE(means_no_gpu(e)) << cudaGetErrorName(e);
}

TEST(CudaCheck, ShortPathKnowsEveryTopFolder) {
  EXPECT_STREQ(short_path("/src/ladder/04_epilogue_mlp/kernels.cu"), "04_epilogue_mlp/kernels.cu");
  EXPECT_STREQ(short_path("/src/ladder/01_matmul_add/tests/gpu_add_test.cpp"), "01_matmul_add/tests/gpu_add_test.cpp");
  EXPECT_STREQ(short_path("/src/ladder/bench/elementwise.cpp"), "bench/elementwise.cpp");
  EXPECT_STREQ(short_path("/src/ladder/tools/ladder_trace.cpp"), "tools/ladder_trace.cpp");
  // A folder above the clone that looks like one of ours does not win over the project's own.
  EXPECT_STREQ(short_path("/home/tools/02_old/ladder/common/cuda/check.cpp"), "common/cuda/check.cpp");
  EXPECT_STREQ(short_path("relative.cpp"), "relative.cpp");
}

}  // namespace
}  // namespace ladder
