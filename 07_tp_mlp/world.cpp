#include "07_tp_mlp/world.h"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <numeric>

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

void World::broadcast(void* data, int bytes) const { MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); }

std::vector<uint64_t> World::all_gather(uint64_t value) const {
  std::vector<uint64_t> all(size_);
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

std::vector<double> World::all_gather(double value) const {
  std::vector<double> all(size_);
  MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  return all;
}

void World::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

std::vector<std::string> World::all_gather(const std::string& value) const {
  // One gather of the lengths, one of the bytes.
  const int len = static_cast<int>(value.size());
  std::vector<int> lens(size_), offsets(size_);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < size_; ++r) offsets[r] = offsets[r - 1] + lens[r - 1];
  std::string all(static_cast<size_t>(offsets.back() + lens.back()), '\0');
  MPI_Allgatherv(value.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r)
    out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lens[r])));
  return out;
}

World::Outcome World::agree(const Outcome& mine) const {
  // The codes first: in the common case (all 0) nothing else moves.
  std::vector<int> codes(size_);
  MPI_Allgather(&mine.code, 1, MPI_INT, codes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int first = -1;
  for (int r = 0; r < size_ && first < 0; ++r) {
    if (codes[r] != 0) first = r;
  }
  if (first < 0) return {};
  const std::vector<std::string> messages = all_gather(mine.message);
  bool same = true;
  for (int r = 0; r < size_; ++r) same = same && codes[r] == codes[first] && messages[r] == messages[first];
  return {codes[first], same ? messages[first] : "rank " + std::to_string(first) + ": " + messages[first]};
}

int stage(const World& world, const std::function<void()>& body) {
  World::Outcome mine;
  try {
    body();
  } catch (const ladder::Error& e) {
    mine = {e.exit_code != 0 ? e.exit_code : 1, e.what()};
  } catch (const std::exception& e) {
    mine = {1, e.what()};
  }
  const World::Outcome all = world.agree(mine);
  if (all.code == 0) return -1;
  if (world.rank() == 0) {
    std::fflush(stdout);
    std::cerr << "error: " << all.message << "\n";
  }
  return all.code;
}

}  // namespace ch07
