#include "07_tp_mlp/rank_gpu.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "chapter/cli.h"
#include "chapter/paths.h"
#include "cuda/check.h"

namespace ch07 {

ladder::GpuInfo take_rank_gpu(const World& world) {
  if (!ladder::gpu_available()) {
    try {
      ladder::require_gpu();
    } catch (const ladder::NoGpuError& e) {
      throw ladder::Error(ladder::no_gpu_message(e.what(), ladder::program_name()), e.exit_code);
    }
  }
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  const int device = count == 1 ? 0 : world.local_rank();
  if (device >= count)
    throw ladder::UsageError(
        fmt::format("rank {} is rank {} of its host and needs GPU {}, but the host shows it {} "
                    "GPUs: start at most one rank per GPU (mpirun -np {} or fewer per host)",
                    world.rank(), world.local_rank(), device, count, count));
  CUDA_CHECK(cudaSetDevice(device));
  return ladder::require_gpu();
}

void require_distinct_gpus(const World& world, const ladder::GpuInfo& gpu) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  char bus[64] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu.id));
  const std::vector<std::string> all = world.all_gather(std::string(host) + " " + bus);
  for (size_t a = 0; a < all.size(); ++a) {
    for (size_t b = a + 1; b < all.size(); ++b) {
      if (all[a] == all[b])
        throw ladder::UsageError(
            fmt::format("ranks {} and {} would share one GPU ({} on {}): each rank needs a GPU "
                        "of its own; start at most one rank per GPU",
                        a, b, bus, host));
    }
  }
}

}  // namespace ch07
