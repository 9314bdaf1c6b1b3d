#include "gpu/check.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstring>

namespace ladder {

namespace {
// __FILE__ is an absolute path under CMake; the reader wants the part inside the project.
const char* short_path(const char* file) {
  for (const char* marker : {"/common/", "/01_", "/02_", "/03_", "/tools/", "/bench/"}) {
    if (const char* p = std::strstr(file, marker)) return p + 1;
  }
  return file;
}
}  // namespace

void throw_check(const char* lib, const std::string& message, const char* expr, const char* file, int line) {
  throw Error(std::string(lib) + " error: " + message + " in `" + expr + "` at " + short_path(file) + ":" +
              std::to_string(line));
}

void check_cuda(int status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  auto err = static_cast<cudaError_t>(status);
  throw_check("CUDA", std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")", expr, file, line);
}

void check_cublas(int status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  auto st = static_cast<cublasStatus_t>(status);
  throw_check("cuBLAS", std::string(cublasGetStatusString(st)) + " (" + cublasGetStatusName(st) + ")", expr, file,
              line);
}

void check_cupti(int status, const char* expr, const char* file, int line) {
  if (status == CUPTI_SUCCESS) return;
  const char* msg = nullptr;
  cuptiGetResultString(static_cast<CUptiResult>(status), &msg);
  throw_check("CUPTI", std::string(msg ? msg : "unknown") + " (" + std::to_string(status) + ")", expr, file, line);
}

}  // namespace ladder
