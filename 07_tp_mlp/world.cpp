#include "07_tp_mlp/world.h"

#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include "07_tp_mlp/stage.h"
#include "base/error.h"

namespace ch07 {

World::World(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // The ranks that share this host's memory are the ones that share its GPUs: their order is the GPU order.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_free(&local);
}

World::~World() { MPI_Finalize(); }

std::vector<int> World::ranks() const {
  std::vector<int> r(size_);
  std::iota(r.begin(), r.end(), 0);
  return r;
}

std::vector<std::string> World::exchange(const std::string& mine, double timeout, const std::string& failed) const {
  if (timeout <= 0) timeout = timeout_s();
  const int tag = tag_;
  tag_ = (tag_ + 1) % 32000;  // MPI guarantees tags up to 32767
  std::vector<std::string> all(static_cast<size_t>(size_));
  all[static_cast<size_t>(rank_)] = mine;
  std::vector<MPI_Request> sends;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    sends.emplace_back();
    MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, p, tag, MPI_COMM_WORLD, &sends.back());
  }
  std::vector<bool> got(static_cast<size_t>(size_), false);
  got[static_cast<size_t>(rank_)] = true;
  int left = size_ - 1;
  const auto start = std::chrono::steady_clock::now();
  while (left > 0) {
    bool progress = false;
    for (int p = 0; p < size_; ++p) {
      int flag = 0;
      MPI_Status status;
      if (got[static_cast<size_t>(p)]) continue;
      MPI_Iprobe(p, tag, MPI_COMM_WORLD, &flag, &status);
      if (!flag) continue;
      int n = 0;
      MPI_Get_count(&status, MPI_CHAR, &n);
      std::string& s = all[static_cast<size_t>(p)];
      s.resize(static_cast<size_t>(n));
      MPI_Recv(s.data(), n, MPI_CHAR, p, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      got[static_cast<size_t>(p)] = true;
      --left;
      progress = true;
    }
    if (left == 0 || progress) continue;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout) {
      std::string missing;
      for (int p = 0; p < size_; ++p)
        if (!got[static_cast<size_t>(p)]) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", p);
      stop_run(fmt::format(
          "error: stage \"{}\": rank {}{} waited {:g} s for rank {}, which did not reach the end of "
          "the stage (--timeout {:g})",
          current_stage(), rank_, failed.empty() ? "" : " failed (" + failed + ") and", timeout, missing, timeout_s()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Every peer has sent its part, so it is receiving ours: the sends complete.
  MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  return all;
}

void World::broadcast(void* data, int bytes) const {
  const std::vector<std::string> all =
      exchange(rank_ == 0 ? std::string(static_cast<const char*>(data), static_cast<size_t>(bytes)) : std::string());
  if (all[0].size() != static_cast<size_t>(bytes))
    throw ladder::Error(fmt::format("broadcast: rank 0 sent {} bytes, expected {}", all[0].size(), bytes));
  std::memcpy(data, all[0].data(), static_cast<size_t>(bytes));
}

std::vector<uint64_t> World::all_gather(uint64_t value) const {
  std::vector<uint64_t> out;
  for (const std::string& s : exchange(std::to_string(value))) out.push_back(std::stoull(s));
  return out;
}

std::vector<double> World::all_gather(double value) const {
  std::vector<double> out;
  for (const std::string& s : exchange(fmt::format("{}", value))) out.push_back(std::stod(s));  // round-trips
  return out;
}

World::Outcome World::agree(const Outcome& mine) const {
  // "code waited message": the message last, so it may hold anything.
  const std::vector<std::string> all = exchange(fmt::format("{} {} {}", mine.code, mine.waited ? 1 : 0, mine.message),
                                                agree_timeout_s(), mine.code != 0 ? mine.message : "");
  std::vector<Outcome> outcomes;
  for (const std::string& s : all) {
    Outcome o;
    const size_t a = s.find(' '), b = s.find(' ', a + 1);
    o.code = std::stoi(s.substr(0, a));
    o.waited = s.substr(a + 1, b - a - 1) == "1";
    o.message = s.substr(b + 1);
    outcomes.push_back(o);
  }
  int first = -1;
  for (int pass = 0; pass < 2 && first < 0; ++pass) {  // a rank's own failure first, then one that waited
    for (int r = 0; r < size_ && first < 0; ++r) {
      const Outcome& o = outcomes[static_cast<size_t>(r)];
      if (o.code != 0 && (pass == 1 || !o.waited)) first = r;
    }
  }
  if (first < 0) return {};
  Outcome out = outcomes[static_cast<size_t>(first)];
  out.rank = first;
  out.alike = true;
  for (const Outcome& o : outcomes) out.alike = out.alike && o.code == out.code && o.message == out.message;
  return out;
}

}  // namespace ch07
