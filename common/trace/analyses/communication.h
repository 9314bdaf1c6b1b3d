// What is communication and what is computation in a trace: the one definition that `breakdown`, `ranks`, the
// multi-rank pictures and HTA's window (hta_window.h) all use. It copies PyTorch's profiler, which is what writes
// the traces: torch.distributed wraps every collective in a `record_param_comms` cpu_op (torch/csrc/distributed/c10d/
// ParamCommsUtils.hpp) holding a `nccl:<op>` range (ProcessGroupNCCL) or, on gloo, a `gloo:<op>` range on gloo's
// worker thread; the Python call itself is a `c10d::<op>_` cpu_op (c10d::allreduce_, ...) that hands the work to the
// backend. On the GPU, NCCL's kernels are named ncclKernel_* (NCCL before 2.19: ncclKernel_AllReduce_RING_LL_Sum_float)
// and ncclDevKernel_* since (ncclDevKernel_AllReduce_Sum_bf16_RING_LL); both begin with "nccl", and no other kernel
// does. (HTA 0.5.0's regex ^nccl.*Kernel takes the same kernels: every NCCL kernel name holds "Kernel".)
#pragma once

#include <string>

#include "trace/model/trace.h"

namespace ladder {

// A communication kernel: a kernel whose name begins with "nccl" (both NCCL name eras).
bool is_comm_kernel(const Event& e);

// A communication range on the CPU: a cpu_op or user_annotation named record_param_comms, nccl:*, gloo:* or c10d::*.
bool is_comm_range(const Event& e);

// Communication: a communication kernel or a communication range.
inline bool is_communication(const Event& e) { return is_comm_kernel(e) || is_comm_range(e); }

// A collective's own work on the CPU, where the backend has no GPU side: the gloo:* and nccl:* ranges (the c10d::*
// op and record_param_comms around them only hand the work over). A rank without NCCL kernels arrives at a collective
// when one of these starts.
bool is_collective_range(const Event& e);

// Computation on the GPU: a kernel that is not communication. Copies and sets are neither (as in the TensorBoard
// plugin's Distributed view and HTA's comm/comp overlap).
inline bool is_compute_kernel(const Event& e) { return e.cat == Cat::Kernel && !is_comm_kernel(e); }

}  // namespace ladder
