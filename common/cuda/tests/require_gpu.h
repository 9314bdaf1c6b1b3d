// How every GPU test starts: skip without a GPU, so `ctest` passes on a laptop, unless LADDER_REQUIRE_GPU=1, where a
// skip would hide that nothing ran (a GPU machine whose GPU the tests cannot see passes every test by skipping it). So
// every run on a GPU machine sets LADDER_REQUIRE_GPU=1, and there a missing GPU fails the test.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cuda/check.h"

namespace ladder::testing {

// Empty when the CUDA runtime sees a GPU, else why not. An error that does not mean "no GPU" (means_no_gpu) is
// thrown: the test fails with it instead of skipping.
inline std::string why_no_gpu() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (!means_no_gpu(err)) CUDA_CHECK(err);
    return std::string("no CUDA GPU (") + cudaGetErrorName(err) + ")";
  }
  return count == 0 ? "no CUDA GPU (none visible)" : "";
}

// LADDER_REQUIRE_GPU set to anything but "" or "0".
inline bool gpu_required() {
  const char* v = std::getenv("LADDER_REQUIRE_GPU");
  return v && *v && std::string(v) != "0";
}

}  // namespace ladder::testing

// Where a test has found there is no GPU: skip it, or fail it with LADDER_REQUIRE_GPU=1. Returns from the test.
#define SKIP_OR_FAIL_NO_GPU(why)                                                                       \
  do {                                                                                                 \
    if (::ladder::testing::gpu_required()) GTEST_FAIL() << (why) << ", but LADDER_REQUIRE_GPU is set"; \
    GTEST_SKIP() << (why);                                                                             \
  } while (0)

// The first line of a GPU test: returns from it (skipped, or failed with LADDER_REQUIRE_GPU=1) when there is no GPU.
#define SKIP_WITHOUT_GPU()                                           \
  do {                                                               \
    const std::string ladder_why_ = ::ladder::testing::why_no_gpu(); \
    if (!ladder_why_.empty()) SKIP_OR_FAIL_NO_GPU(ladder_why_);      \
  } while (0)
