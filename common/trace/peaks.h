// What a GPU can do at best, by its datasheet: the dense BF16 tensor-core rate and the memory bandwidth, for the
// GPU a trace names in its deviceProperties. The kernels view shows each kernel's TFLOP/s and GB/s as a share of
// these when the reader gives no peak of their own (ladder-trace kernels --peak-tflops/--peak-gbps).
#pragma once

#include <string>
#include <vector>

namespace ladder {

struct Peak {
  double tflops = 0;   // dense (not 2:4 sparse) BF16 tensor-core TFLOP/s; 0 = unknown
  double gbps = 0;     // memory bandwidth, GB/s (1e9 bytes); 0 = unknown
  std::string gpu;     // what it is the peak of: "H100 SXM5 (datasheet)", "given", "measured"
  std::string source;  // where the figures come from
};

// The known GPUs, for `ladder-trace kernels --help` and the tests.
const std::vector<std::pair<std::string, Peak>>& known_peaks();
// The peak of the GPU `device_name` names ("NVIDIA H100 80GB HBM3", as cudaGetDeviceProperties and Kineto write it);
// a Peak with tflops = gbps = 0 when it is not one of known_peaks().
Peak peak_of(const std::string& device_name);

}  // namespace ladder
