// What a GPU can do at best, by its datasheet: the dense BF16 tensor-core rate, the FP32 rate of its CUDA cores (no
// tensor cores) and the memory bandwidth, for the GPU a trace names in its deviceProperties. The kernels view shows
// each kernel's TFLOP/s and GB/s as a share of these when the reader gives no peak of their own (ladder-trace kernels
// --peak-tflops/--peak-gbps): a kernel that uses tensor cores against the first, any other against the second (a
// float32 GEMM on the CUDA cores, as chapter 01's 4096 GEMM, is rated against what those cores can do).
#pragma once

#include <string>
#include <vector>

namespace ladder {

struct Peak {
  double tflops = 0;   // dense (not 2:4 sparse) BF16 tensor-core TFLOP/s; 0 = unknown
  double gbps = 0;     // memory bandwidth, GB/s (1e9 bytes); 0 = unknown
  std::string gpu;     // what it is the peak of: "H100 SXM5 (datasheet)", "given", "measured"
  std::string source;  // where the figures come from
  double fp32_tflops = 0;  // FP32 on the CUDA cores, no tensor cores; 0 = none apart: `tflops` rates every kernel
};

// The known GPUs, for `ladder-trace kernels --help` and the tests.
const std::vector<std::pair<std::string, Peak>>& known_peaks();
// The peak of the GPU `device_name` names ("NVIDIA H100 80GB HBM3", as cudaGetDeviceProperties and Kineto write it);
// a Peak with tflops = gbps = 0 when it is not one of known_peaks().
Peak peak_of(const std::string& device_name);

}  // namespace ladder
