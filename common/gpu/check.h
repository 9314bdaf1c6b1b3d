// Checks for every library call the ladder makes. Each macro turns a failed call into a ladder::Error whose message
// names the expression, the file and the line, e.g.
//   CUDA error: out of memory (cudaErrorMemoryAllocation) in `cudaMalloc(&p, bytes)` at common/tensor.cpp:42
// A chapter's main catches it and prints that one line (see run_main in chapter.h).
#pragma once

#include <stdexcept>
#include <string>

namespace ladder {

// Any failure the ladder reports to its reader. `exit_code` is what a chapter exits with: 2 for usage problems
// (bad options, no GPU, unwritable trace folder), 1 for everything else.
struct Error : std::runtime_error {
  explicit Error(const std::string& what, int exit_code = 1) : std::runtime_error(what), exit_code(exit_code) {}
  int exit_code;
};

// A usage error: bad input from the reader, reported before any GPU work.
struct UsageError : Error {
  explicit UsageError(const std::string& what) : Error(what, 2) {}
};

[[noreturn]] void throw_check(const char* lib, const std::string& message, const char* expr, const char* file, int line);

void check_cuda(int status, const char* expr, const char* file, int line);    // cudaError_t
void check_cublas(int status, const char* expr, const char* file, int line);  // cublasStatus_t
void check_cupti(int status, const char* expr, const char* file, int line);   // CUptiResult

}  // namespace ladder

#define CUDA_CHECK(expr) ::ladder::check_cuda(static_cast<int>(expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::ladder::check_cublas(static_cast<int>(expr), #expr, __FILE__, __LINE__)
#define CUPTI_CHECK(expr) ::ladder::check_cupti(static_cast<int>(expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad configuration only shows up in cudaGetLastError.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
