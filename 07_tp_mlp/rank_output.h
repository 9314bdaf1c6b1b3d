// What each rank prints and records: the check of its output against the CPU, its profiled steps, its report (into
// rank<r>.txt beside its trace), and stdout silenced on every rank but 0 where all ranks would say the same thing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "07_tp_mlp/nccl_comm.h"
#include "gpu/info.h"
#include "gpu/tensor.h"
#include "profiler/schedule.h"
#include "trace/model/trace.h"

namespace ch07 {

// Silences stdout and stderr of every rank but 0 while it lives (argument parsing: every rank finds the same error).
class QuietUnlessRankZero {
 public:
  explicit QuietUnlessRankZero(int rank);
  ~QuietUnlessRankZero();
  QuietUnlessRankZero(const QuietUnlessRankZero&) = delete;
  QuietUnlessRankZero& operator=(const QuietUnlessRankZero&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

// Sends stdout to `path` (created or truncated) while it lives: a rank's report goes to its rank<r>.txt.
class StdoutToFile {
 public:
  explicit StdoutToFile(const std::string& path);
  ~StdoutToFile();
  StdoutToFile(const StdoutToFile&) = delete;
  StdoutToFile& operator=(const StdoutToFile&) = delete;

 private:
  int saved_ = -1;
};

// The CPU reference of the MLP on a sample of rows (04's check: every value of those rows, within bf16's tolerance,
// and every value of the output finite). The reference rows are computed once and serve every output checked.
class ReferenceRows {
 public:
  ReferenceRows(uint64_t seed_x, uint64_t seed_gate, uint64_t seed_up, uint64_t seed_down, int64_t dim, int64_t hidden,
                ladder::DType dtype);
  // The line the chapter prints after "check (name): "; a ladder::Error with the first mismatches otherwise.
  std::string check(const ladder::Tensor& y, int64_t rows, const std::string& name);

 private:
  uint64_t sx_;
  int64_t dim_, hidden_;
  ladder::DType dt_;
  std::vector<float> gate_, up_, down_;
  std::map<int64_t, std::vector<double>> rows_;
};

// The schedule's steps, each ProfilerStep#k { mlp_fwd { forward } } then comm.sync() (a wait with a timeout instead
// of a plain synchronize), and the trace of the active steps.
ladder::Trace profile_rank(const ladder::Schedule& schedule, const std::function<void()>& forward,
                           const Communicator& comm);

// The chapters' report of one trace: torch's summary table, the kernels of the last step against ceilings measured
// on this GPU, the regime per step, the timeline of the last step.
void print_rank_report(const ladder::Trace& trace, const ladder::GpuInfo& gpu);

}  // namespace ch07
