#include "cuda/check.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cctype>
#include <cstring>

namespace ladder {

namespace {
// __FILE__ is an absolute path under CMake; the reader wants the part inside the project, from the project's top
// folder on: common/, bench/, tools/ or a chapter (two digits and '_'). The last such folder in the path wins, so a
// clone under ~/tools/ still prints common/gpu/ops.cpp.
bool is_top_folder(const char* name) {
  for (const char* top : {"common/", "bench/", "tools/"}) {
    if (std::strncmp(name, top, std::strlen(top)) == 0) return true;
  }
  return std::isdigit(static_cast<unsigned char>(name[0])) && std::isdigit(static_cast<unsigned char>(name[1])) &&
         name[2] == '_';
}

}  // namespace

const char* short_path(const char* file) {
  const char* from = file;
  for (const char* slash = std::strchr(file, '/'); slash; slash = std::strchr(slash + 1, '/')) {
    if (is_top_folder(slash + 1)) from = slash + 1;
  }
  return from;
}

void throw_check(const char* lib, const std::string& message, const char* expr, const char* file, int line) {
  throw Error(std::string(lib) + " error: " + message + " in `" + expr + "` at " + short_path(file) + ":" +
              std::to_string(line));
}

void check_cuda(int status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  auto err = static_cast<cudaError_t>(status);
  throw_check("CUDA", std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")", expr, file, line);
}

bool means_no_gpu(int status) {
  const auto err = static_cast<cudaError_t>(status);
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary;
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
