#include "07_tp_mlp/rank_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "chapter/chapter.h"
#include "chapter/reference.h"
#include "gpu/values.h"
#include "profiler/profiler.h"
#include "trace/model/index.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/steps_table.h"
#include "trace/renderers/timeline.h"

namespace ch07 {

QuietUnlessRankZero::QuietUnlessRankZero(int rank) {
  if (rank == 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  saved_out_ = dup(1);
  saved_err_ = dup(2);
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, 1);
  dup2(null, 2);
  close(null);
}

QuietUnlessRankZero::~QuietUnlessRankZero() {
  if (saved_out_ < 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out_, 1);
  dup2(saved_err_, 2);
  close(saved_out_);
  close(saved_err_);
}

StdoutToFile::StdoutToFile(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw ladder::Error("cannot write " + path);
  std::fflush(stdout);
  saved_ = dup(1);
  dup2(fd, 1);
  close(fd);
}

StdoutToFile::~StdoutToFile() {
  std::fflush(stdout);
  dup2(saved_, 1);
  close(saved_);
}

ReferenceRows::ReferenceRows(uint64_t sx, uint64_t sgate, uint64_t sup, uint64_t sdown, int64_t dim, int64_t hidden,
                             ladder::DType dt)
    : sx_(sx), dim_(dim), hidden_(hidden), dt_(dt) {
  const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
  gate_ = ladder::random_values(hidden * dim, sgate, dt, -bd, bd);
  up_ = ladder::random_values(hidden * dim, sup, dt, -bd, bd);
  down_ = ladder::random_values(dim * hidden, sdown, dt, -bh, bh);
}

std::string ReferenceRows::check(const ladder::Tensor& y, int64_t rows, const std::string& name) {
  // A sample of rows (each needs all of gate and up: 3 x hidden x dim multiply-adds), as 04 checks.
  return ladder::check_output(
      y, rows, dim_, ladder::sample_output(rows, dim_, 3.0 * hidden_ * dim_, 0, 1e9),
      [&](int64_t r, const std::vector<int64_t>& cols, double* ref) {
        std::vector<double>& row = rows_[r];
        if (row.empty()) {
          std::vector<float> x_row(static_cast<size_t>(dim_));
          for (int64_t k = 0; k < dim_; ++k)
            x_row[static_cast<size_t>(k)] = ladder::random_value(sx_, r * dim_ + k, dt_);
          row.resize(static_cast<size_t>(dim_));
          ladder::ref::geglu_mlp_row(x_row.data(), gate_.data(), up_.data(), down_.data(), dim_, hidden_, row.data());
        }
        for (size_t c = 0; c < cols.size(); ++c) ref[c] = row[static_cast<size_t>(cols[c])];
      },
      ladder::tolerance_for(dt_, hidden_), name);
}

ladder::Trace profile_rank(const ladder::Schedule& schedule, const std::function<void()>& forward,
                           const Communicator& comm) {
  ladder::Profiler profiler(schedule);
  for (int k = 0; k < schedule.total_steps(); ++k) {
    profiler.begin_step(k);
    {
      ladder::Range range("mlp_fwd");
      forward();
    }
    comm.sync();
    profiler.end_step(k);
  }
  return profiler.take_trace();
}

void print_rank_report(const ladder::Trace& trace, const ladder::GpuInfo& gpu) {
  const ladder::TraceIndex index(trace);
  fmt::print("\n{}\n", ladder::summary_table(index));
  ladder::print_kernels(trace, gpu);
  fmt::print("\n{}", ladder::regime_table(index));
  fmt::print("\n{}", ladder::timeline(trace, -1, 140));
}

}  // namespace ch07
