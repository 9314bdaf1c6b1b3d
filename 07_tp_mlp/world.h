// The ranks of an `mpirun -np N` run: MPI starts them, tells each its rank, and carries the few small messages that
// set the run up (the ncclUniqueId, the arguments every rank must agree on, each rank's check). Every byte of the
// model goes between GPUs through NCCL (nccl_comm.h), never through MPI. Every exchange waits at most the run's
// deadline (stage.h's timeout_s): a rank that does not send its part by then is named, and the run stops (stop_run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ch07 {

class World {
 public:
  World(int* argc, char*** argv);  // MPI_Init
  ~World();                        // MPI_Finalize
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // this rank's index among the ranks of its host: its GPU
  std::vector<int> ranks() const;                 // 0 .. size-1

  // Every rank's `mine`, in rank order: each rank sends its part to every other one and polls for theirs, for
  // `timeout_s` at most (<= 0: the run's deadline). `failed`: this rank's own failure, for the line it says when a
  // peer misses the deadline.
  std::vector<std::string> exchange(const std::string& mine, double timeout_s = 0,
                                    const std::string& failed = "") const;
  void broadcast(void* data, int bytes) const;  // rank 0's bytes to every rank
  std::vector<uint64_t> all_gather(uint64_t value) const;
  std::vector<double> all_gather(double value) const;
  std::vector<std::string> all_gather(const std::string& value) const { return exchange(value); }

  // One rank's outcome of a stage: exit code 0 and no message when it went well. `waited`: the failure is a wait
  // that passed the deadline, most likely the echo of another rank's failure.
  struct Outcome {
    int code = 0;
    std::string message;
    bool waited = false;
    int rank = -1;       // in agree's answer: the rank whose failure it is
    bool alike = false;  // in agree's answer: every rank failed with this code and message
  };
  // Every rank calls it with its own outcome; all get the same answer: success if every rank succeeded, else the
  // failure of the lowest failing rank (one that did not merely wait, if there is one).
  Outcome agree(const Outcome& mine) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  mutable int tag_ = 0;  // each exchange's messages carry a tag of their own
};

}  // namespace ch07
