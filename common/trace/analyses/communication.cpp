// See communication.h.
#include "trace/analyses/communication.h"

namespace ladder {

namespace {
bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool host_range(const Event& e) { return e.cat == Cat::CpuOp || e.cat == Cat::UserAnnotation; }
}  // namespace

bool is_comm_kernel(const Event& e) { return e.cat == Cat::Kernel && starts_with(e.name, "nccl"); }

bool is_comm_range(const Event& e) {
  return host_range(e) && (e.name == "record_param_comms" || starts_with(e.name, "nccl:") ||
                           starts_with(e.name, "gloo:") || starts_with(e.name, "c10d::"));
}

bool is_collective_range(const Event& e) {
  return host_range(e) && (starts_with(e.name, "gloo:") || starts_with(e.name, "nccl:"));
}

}  // namespace ladder
