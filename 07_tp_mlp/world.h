// The ranks of an `mpirun -np N` run: MPI starts them, tells each its rank, and carries the few small messages that
// set the run up (the ncclUniqueId, the arguments every rank must agree on, each rank's check). Every byte of the
// model goes between GPUs through NCCL (nccl_comm.h), never through MPI.
#pragma once

#include <cstdint>
#include <functional>
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

  void broadcast(void* data, int bytes) const;  // rank 0's bytes to every rank
  std::vector<uint64_t> all_gather(uint64_t value) const;
  std::vector<double> all_gather(double value) const;
  std::vector<std::string> all_gather(const std::string& value) const;
  void barrier() const;

  // One rank's outcome of a stage: exit code 0 and no message when it went well.
  struct Outcome {
    int code = 0;
    std::string message;
  };
  // Every rank calls it with its own outcome; all get the same answer: success if every rank succeeded, else the
  // failure of the lowest failing rank, its message prefixed with "rank R: " unless every rank failed with the same
  // message (a usage error every rank finds alike reads as one line).
  Outcome agree(const Outcome& mine) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

// Runs one stage of the run on every rank: `body` on this rank (a ladder::Error or any exception becomes this rank's
// outcome), then World::agree. On a failure every rank returns the agreed exit code and rank 0 alone prints the one
// line "error: ..."; on success it returns -1 (go on).
int stage(const World& world, const std::function<void()>& body);

}  // namespace ch07
