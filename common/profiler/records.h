// What the CUPTI collector hands the trace builder: plain copies of CUPTI's activity records, with every name already
// looked up and every kernel argument already worked out. Nothing here needs a CUPTI header, so the builder is a pure
// function that the CPU tests feed with records they make up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/trace.h"

namespace ladder {

// A runtime or driver API call (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER).
struct ApiRecord {
  bool driver = false;
  std::string name;  // as CUPTI names the callback, "_vNNNN" suffix included ("cudaLaunchKernel_v7000")
  uint32_t cbid = 0;
  int64_t pid = 0, tid = 0;
  uint64_t correlation = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

// A kernel, memcpy or memset (CONCURRENT_KERNEL / MEMCPY / MEMSET). A zero timestamp means CUPTI could not complete
// the record (its device buffer ran short): the builder counts those instead of drawing them at time 0.
struct GpuRecord {
  Cat cat = Cat::Kernel;
  std::string name;  // kernels: the mangled name CUPTI gives; copies and sets: "Memcpy DtoD (Device -> Device)"
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t correlation = 0;
  GpuArgs args;  // device, stream, grid, registers, occupancy, bytes, ...
  int dynamic_shared_memory = 0;  // kernels: the part of args.shared_memory set at launch (the occupancy needs it)
};

// "While the API call with this correlation id ran, our range `id` was the innermost one open on its stack."
// Ops push on one stack (their id becomes a kernel's "External id"), user ranges on another (their id gives a user
// range's span on the GPU lane).
struct ExternalRecord {
  enum Stack { Op, UserRange } stack = Op;
  int64_t id = 0;
  uint64_t correlation = 0;
};

struct Records {
  std::vector<ApiRecord> api;
  std::vector<GpuRecord> gpu;
  std::vector<ExternalRecord> ext;
};

}  // namespace ladder
