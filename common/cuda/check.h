// Checks for every library call the ladder makes. Each macro turns a failed call into a ladder::Error whose message
// names the expression, the file and the line, e.g.
//   CUDA error: out of memory (cudaErrorMemoryAllocation) in `cudaMalloc(&p, bytes)` at common/gpu/memory.cpp:42
// A chapter's main catches it and prints that one line (see run_main in chapter.h).
#pragma once

#include <string>

#include "base/error.h"

namespace ladder {

// The part of a source path a reader recognises: "/home/me/ladder/04_epilogue_mlp/kernels.cu" -> "04_epilogue_mlp/...".
const char* short_path(const char* file);

[[noreturn]] void throw_check(const char* lib, const std::string& message, const char* expr, const char* file, int line);

void check_cuda(int status, const char* expr, const char* file, int line);    // cudaError_t
// Whether cudaGetDeviceCount's error (a cudaError_t) means this machine has no GPU to use: no device, no driver
// (cudaErrorInsufficientDriver) or only the toolkit's stub of it. Any other error is a GPU that is there and failing,
// which a test must not skip.
bool means_no_gpu(int status);
void check_cublas(int status, const char* expr, const char* file, int line);  // cublasStatus_t
void check_cupti(int status, const char* expr, const char* file, int line);   // CUptiResult

}  // namespace ladder

#define CUDA_CHECK(expr) ::ladder::check_cuda(static_cast<int>(expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::ladder::check_cublas(static_cast<int>(expr), #expr, __FILE__, __LINE__)
#define CUPTI_CHECK(expr) ::ladder::check_cupti(static_cast<int>(expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad configuration only shows up in cudaGetLastError.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
