// The GPU a program runs on: whether there is one, and its properties.
#pragma once

#include <cstddef>
#include <string>

#include "base/error.h"

namespace ladder {

struct GpuInfo {
  int id = 0;
  std::string name;
  int major = 0, minor = 0;
  int sms = 0;
  size_t total_mem = 0;
  double peak_bandwidth_gbs = 0;  // from memory clock and bus width: a datasheet figure, labelled as such
  int l2_bytes = 0;
};

// What require_gpu throws when the CUDA runtime sees no GPU: "no CUDA GPU was found", exit code 2. A chapter adds
// where our reference traces are (chapter/paths.h); this room knows nothing of the repository.
struct NoGpuError : Error {
  explicit NoGpuError(const std::string& message) : Error(message, 2) {}
};

// True when the CUDA runtime sees at least one GPU.
bool gpu_available();
// The current GPU's properties. Throws NoGpuError (exit code 2, one sentence) when there is none, and the CUDA error
// (exit code 1) when the runtime fails to list the GPUs for another reason (cuda/check.h's means_no_gpu).
GpuInfo require_gpu();

}  // namespace ladder
