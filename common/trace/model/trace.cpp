// The event model's vocabulary (trace.h): category names, and which API calls launch work or wait for it.
#include "trace/model/trace.h"

#include <map>

namespace ladder {

const char* cat_name(Cat cat) {
  switch (cat) {
    case Cat::UserAnnotation:
      return "user_annotation";
    case Cat::CpuOp:
      return "cpu_op";
    case Cat::CudaRuntime:
      return "cuda_runtime";
    case Cat::CudaDriver:
      return "cuda_driver";
    case Cat::Kernel:
      return "kernel";
    case Cat::GpuMemcpy:
      return "gpu_memcpy";
    case Cat::GpuMemset:
      return "gpu_memset";
    case Cat::GpuUserAnnotation:
      return "gpu_user_annotation";
    case Cat::Other:
      break;
  }
  return "other";
}

Cat cat_from_name(const std::string& name) {
  static const std::map<std::string, Cat> kCats = {
      {"user_annotation", Cat::UserAnnotation},
      {"cpu_op", Cat::CpuOp},
      {"cuda_runtime", Cat::CudaRuntime},
      {"cuda_driver", Cat::CudaDriver},
      {"kernel", Cat::Kernel},
      {"gpu_memcpy", Cat::GpuMemcpy},
      {"gpu_memset", Cat::GpuMemset},
      {"gpu_user_annotation", Cat::GpuUserAnnotation},
  };
  auto it = kCats.find(name);
  return it == kCats.end() ? Cat::Other : it->second;
}

bool is_gpu_cat(Cat cat) { return is_gpu_activity(cat) || cat == Cat::GpuUserAnnotation; }
bool is_gpu_activity(Cat cat) { return cat == Cat::Kernel || cat == Cat::GpuMemcpy || cat == Cat::GpuMemset; }
bool is_api_call(Cat cat) { return cat == Cat::CudaRuntime || cat == Cat::CudaDriver; }

namespace {
const OpInputs kNoInputs;
}  // namespace

const std::vector<std::vector<int64_t>>& Event::input_dims() const { return (inputs ? *inputs : kNoInputs).dims; }
const std::vector<std::string>& Event::input_types() const { return (inputs ? *inputs : kNoInputs).types; }
const std::vector<std::vector<int64_t>>& Event::input_strides() const { return (inputs ? *inputs : kNoInputs).strides; }
const std::vector<std::string>& Event::input_concrete() const { return (inputs ? *inputs : kNoInputs).concrete; }
void Event::set_inputs(std::vector<std::vector<int64_t>> dims, std::vector<std::string> types,
                       std::vector<std::vector<int64_t>> strides) {
  inputs = std::make_shared<const OpInputs>(OpInputs{std::move(dims), std::move(types), std::move(strides), {}});
}

bool is_launch_call(const Event& e) {
  if (!is_api_call(e.cat)) return false;
  static const char* const kPrefixes[] = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
                                          "cuLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch",
                                          "__cudaLaunchKernel"};
  for (const char* p : kPrefixes) {
    if (e.name.rfind(p, 0) == 0) return true;
  }
  return false;
}

bool is_sync_call(const Event& e) {
  static const char* const kNames[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                       "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"};
  if (!is_api_call(e.cat)) return false;
  for (const char* n : kNames) {
    if (e.name == n) return true;
  }
  return false;
}

}  // namespace ladder
