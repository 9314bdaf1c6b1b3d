// See peaks.h. Datasheet figures, dense BF16: NVIDIA's datasheets print the 2:4 sparse rate with an asterisk, and
// dense is half of it. FP32 is the datasheet's "FP32" line (the CUDA cores; no sparsity). Bandwidth is the
// datasheet's "GPU memory bandwidth" (TB/s = 1000 GB/s).
#include "trace/analyses/peaks.h"

#include <algorithm>
#include <cctype>

namespace ladder {

namespace {
// The name a GPU reports, in lower case, must contain every word of the key (in order of the table: the first whose
// words all match wins, so the more specific names come first).
const std::vector<std::pair<std::string, Peak>> kPeaks = {
    {"h100 nvl", {835.5, 3900, "H100 NVL", "NVIDIA H100 Tensor Core GPU datasheet: "
                                 "BF16 1,671 TFLOPS sparse, 3.9 TB/s, FP32 60 TFLOPS", 60}},
    {"h100 pcie", {756.5, 2000, "H100 PCIe", "NVIDIA H100 Tensor Core GPU datasheet: "
                                 "BF16 1,513 TFLOPS sparse, 2 TB/s, FP32 51 TFLOPS", 51}},
    {"h100", {989.5, 3350, "H100 SXM5", "NVIDIA H100 Tensor Core GPU datasheet: "
                                 "BF16 1,979 TFLOPS sparse, 3.35 TB/s, FP32 67 TFLOPS", 67}},
    {"h200 nvl", {835.5, 4800, "H200 NVL", "NVIDIA H200 datasheet: "
                                 "BF16 1,671 TFLOPS sparse, 4.8 TB/s, FP32 60 TFLOPS", 60}},
    {"h200", {989.5, 4800, "H200 SXM", "NVIDIA H200 datasheet: "
                                 "BF16 1,979 TFLOPS sparse, 4.8 TB/s, FP32 67 TFLOPS", 67}},
    {"a100 80gb pcie", {312, 1935, "A100 80GB PCIe", "NVIDIA A100 datasheet: "
                                 "BF16 312 TFLOPS dense, 1,935 GB/s, FP32 19.5 TFLOPS", 19.5}},
    {"a100 sxm4 80gb", {312, 2039, "A100 80GB SXM", "NVIDIA A100 datasheet: "
                                 "BF16 312 TFLOPS dense, 2,039 GB/s, FP32 19.5 TFLOPS", 19.5}},
    {"a100", {312, 1555, "A100 40GB", "NVIDIA A100 datasheet: "
                                 "BF16 312 TFLOPS dense, 1,555 GB/s, FP32 19.5 TFLOPS", 19.5}},
    {"l40s", {366.5, 864, "L40S", "NVIDIA L40S datasheet: "
                                 "BF16 733 TFLOPS sparse, 864 GB/s, FP32 91.6 TFLOPS", 91.6}},
    {"l4", {121, 300, "L4", "NVIDIA L4 datasheet: "
                                 "BF16 242 TFLOPS sparse, 300 GB/s, FP32 30.3 TFLOPS", 30.3}},
    {"a10", {125, 600, "A10", "NVIDIA A10 datasheet: "
                                 "BF16 125 TFLOPS dense, 600 GB/s, FP32 31.2 TFLOPS", 31.2}},
};

std::string lower(std::string s) {
  for (char& c : s) c = c == '-' || c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Every word of `key` is a word of `name` ("l4" must not match "l40s", nor "a10" "a100").
bool has_words(const std::string& name, const std::string& key) {
  std::vector<std::string> words;
  std::string w;
  for (char c : name + " ") {
    if (c == ' ') {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  size_t from = 0;
  while (from < key.size()) {
    const size_t end = std::min(key.find(' ', from), key.size());
    if (std::find(words.begin(), words.end(), key.substr(from, end - from)) == words.end()) return false;
    from = end + 1;
  }
  return true;
}
}  // namespace

const std::vector<std::pair<std::string, Peak>>& known_peaks() { return kPeaks; }

Peak peak_of(const std::string& device_name) {
  const std::string name = lower(device_name);
  for (const auto& [key, peak] : kPeaks) {
    if (has_words(name, key)) return peak;
  }
  return {};
}

}  // namespace ladder
