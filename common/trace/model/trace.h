// The one event model of the ladder. What CUPTI and our host ranges collect during a run and what a trace file holds
// (ours or one torch.profiler wrote) are the same `Trace`, so the summary table, the step statistics, the terminal
// timeline and the diff can all be printed from a live run or from a committed file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// The Kineto "cat" of an event.
enum class Cat {
  UserAnnotation,     // "user_annotation": ProfilerStep#k, forward ranges
  CpuOp,              // "cpu_op": linear, t, addmm, ...
  CudaRuntime,        // "cuda_runtime": cudaLaunchKernel, cudaDeviceSynchronize, ...
  CudaDriver,         // "cuda_driver": cuLaunchKernelEx, ...
  Kernel,             // "kernel"
  GpuMemcpy,          // "gpu_memcpy"
  GpuMemset,          // "gpu_memset"
  GpuUserAnnotation,  // "gpu_user_annotation": a user range's span on the GPU lane
  Other,              // anything else a file holds (python_function, Trace, ...): kept when read, never written by us
};
const char* cat_name(Cat cat);
Cat cat_from_name(const std::string& name);
bool is_gpu_cat(Cat cat);  // Kernel, GpuMemcpy, GpuMemset, GpuUserAnnotation: everything on the GPU lane
// Work that ran on the GPU: kernels, copies and sets, not the annotation spans drawn over them.
bool is_gpu_activity(Cat cat);
// A host call into CUDA, runtime or driver API: what a GPU activity's correlation id points back to.
bool is_api_call(Cat cat);

// Fields only GPU activities have (Kineto's kernel/memcpy/memset args).
// (8-byte fields first: a trace can hold millions of events, and padding is memory.)
struct GpuArgs {
  double blocks_per_sm = 0;
  double warps_per_sm = 0;
  int64_t bytes = 0;  // memcpy/memset
  int device = 0;
  int context = 0;
  int stream = 0;
  int registers_per_thread = 0;
  int shared_memory = 0;  // static + dynamic bytes
  int grid[3] = {0, 0, 0};
  int block[3] = {0, 0, 0};
  int est_occupancy_pct = 0;  // "est. achieved occupancy %"
};

// What torch's record_shapes writes for a cpu_op, one entry per input: "Input Dims", "Input type", "Input Strides",
// and "Concrete Inputs" (a scalar's or an int list's value as torch prints it, "[1, 1]"; "" for a tensor).
struct OpInputs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::vector<int64_t>> strides;
  std::vector<std::string> concrete;
};

struct Event {
  Cat cat = Cat::Other;
  int32_t cbid = -1;  // "cbid": CUPTI callback id of a runtime/driver call (beside `cat`: no padding)
  std::string name;
  int64_t pid = 0;  // CPU: process id; GPU: device index
  int64_t tid = 0;  // CPU: system thread id; GPU: CUDA stream id
  int64_t ts_ns = 0;   // absolute nanoseconds on the trace's clock (CLOCK_REALTIME, as CUPTI stamps)
  int64_t dur_ns = 0;  // >= 0
  int64_t external_id = -1;  // "External id": the innermost op/range that was open when this was launched; -1 = none
  int64_t correlation = -1;  // "correlation": CUPTI correlation id, shared by a launch call and the work it launched
  // cpu_op only: the "flops" torch's with_flops=True recorded for the op; -1 where the trace holds none.
  int64_t flops = -1;
  // A collective's "Seq" (its sequence number in its process group) where the trace records one, else -1.
  int64_t seq = -1;
  // A collective's "Process Group Name" (record_param_comms, and its NCCL kernel: Kineto copies the op's args onto
  // it), as an index into Trace::process_groups; -1 where the event has none.
  int32_t process_group = -1;
  GpuArgs gpu;               // Kernel, GpuMemcpy, GpuMemset only
  // cpu_op only: its inputs as record_shapes wrote them; null when none were. Shared, not one copy per event: a
  // training run calls the same ops on the same shapes every step, and the reader keeps one copy of each distinct
  // inputs (json_read.cpp). In bench/make_big_trace.py's 1 GB trace, 1,151,712 ops have 199 distinct inputs; held as
  // three lists in every event they took 587 MiB of the 1.2 GB that reading it took.
  std::shared_ptr<const OpInputs> inputs;
  // Further args torch writes for some events, in order, each value as JSON text: a collective's record_param_comms
  // op ("Collective name": "\"allreduce\"", "In msg nelems": "6291456", ...) and, copied from it, its NCCL kernel's.
  // Null when there are none. Written after the category's own keys; the reader does not keep them.
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>> extra_args;

  // The inputs' lists, empty when none were recorded.
  const std::vector<std::vector<int64_t>>& input_dims() const;
  const std::vector<std::string>& input_types() const;
  const std::vector<std::vector<int64_t>>& input_strides() const;
  const std::vector<std::string>& input_concrete() const;
  void set_inputs(std::vector<std::vector<int64_t>> dims, std::vector<std::string> types,
                  std::vector<std::vector<int64_t>> strides = {});

  int64_t end_ns() const { return ts_ns + dur_ns; }
};

// One "[memory]" instant of a profile_memory=True trace: an allocation (bytes > 0) or a free (bytes < 0).
// The largest byte count a [memory] record may hold, 2^50 (1 PiB, past any allocator's): the reader refuses more, and
// the levels and sums made of such counts are checked against it too (memory.cpp).
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 50;

struct MemoryRecord {
  int64_t ts_ns = 0;
  int64_t bytes = 0;
  int64_t tid = 0;
  int64_t addr = -1;  // "Addr": pairs a free with its allocation; -1 where there is none ([OutOfMemory], old traces)
  // The allocator's totals on this device just after this record ("Total Allocated", "Total Reserved"); -1 where the
  // trace has none (traces before torch 1.10).
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  int device_type = 0;  // c10::DeviceType: 0 CPU, 1 CUDA (and others torch counts with them: see key_averages.cpp)
  int device_id = -1;
};

// cudaGetDeviceProperties fields, as Kineto's "deviceProperties" holds them.
struct DeviceProps {
  int id = 0;
  std::string name;
  int64_t total_global_mem = 0;
  int compute_major = 0, compute_minor = 0;
  int max_threads_per_block = 0, max_threads_per_sm = 0;
  int regs_per_block = 0, warp_size = 0;
  int64_t shared_mem_per_block = 0;
  int num_sms = 0;
  int regs_per_sm = 0;
  int64_t shared_mem_per_block_optin = 0, shared_mem_per_sm = 0;
};

struct Trace {
  std::vector<DeviceProps> devices;
  std::map<std::string, std::string> metadata;  // extra top-level keys, values as JSON text (e.g. "cupti_version": "130001")
  std::string process_name = "ladder";
  // The CPU threads' names from the file's thread_name metadata, by tid ("thread 446 (pt_autograd_0)" in a torch
  // trace); what the views name a thread by. Read only: the writer names threads after the process.
  std::map<int64_t, std::string> thread_names;
  int64_t pid = 0;                // the CPU process
  // Optional, not 0 for "unset": 0 is a valid time (a trace whose first event is at ts 0), so no value stands for it.
  std::optional<int64_t> base_time_ns;     // ts in the file are relative to this (ours: the first event's second;
                                           // Kineto: 3 months); unset: the writer picks one from the first event
  std::optional<int64_t> window_start_ns;  // the capture window (metadata events are stamped with its start);
  std::optional<int64_t> window_end_ns;    // unset: the events' span
  // When torch's profiler started (Kineto's "PyTorch Profiler (0)" span): torch's key_averages() takes every event's
  // start and end as float microseconds from it, so its averages' last digit hangs on it. Unset: not a torch trace.
  std::optional<int64_t> profiler_start_ns;
  std::vector<Event> events;      // X events only; flows are derived from `correlation`, metadata from pid/tid
  std::vector<std::string> process_groups;  // the "Process Group Name"s the events hold (Event::process_group)
  std::vector<MemoryRecord> memory;  // profile_memory=True: torch's [memory] instants, in file order
  bool profile_memory = false;       // "profile_memory": 1 at the top level, or [memory] instants in the file
  std::string name;               // traceName
  // load_trace/parse_trace: unusable events skipped, per reason ("skipped 3 events of t.json: 2 without a numeric ts,
  // 1 not an object"); empty when none were. Kineto's bookkeeping (string pids, ph "M"/"s"/"f"/"i") is not counted.
  std::string load_note;
};

// The one definition of "a launch call": an API call that puts a kernel or a whole graph on a stream
// (cudaLaunchKernel*, cudaLaunchCooperativeKernel*, cuLaunchKernel*, cuLaunchCooperativeKernel*, cudaGraphLaunch,
// cuGraphLaunch, and nvcc's __cudaLaunchKernel). Copies and sets (cudaMemcpyAsync, ...) are API calls but not launches.
bool is_launch_call(const Event& e);
// cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize (and their driver twins): the CPU waits for the GPU.
bool is_sync_call(const Event& e);

}  // namespace ladder
