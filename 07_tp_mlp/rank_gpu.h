// Which GPU a rank takes: the one of its index among the ranks of its host (local rank r on GPU r), or the only one
// it sees (a launcher that gives each rank CUDA_VISIBLE_DEVICES of its own). Both collective: every rank calls them.
#pragma once

#include "07_tp_mlp/world.h"
#include "gpu/info.h"

namespace ch07 {

// Makes the rank's GPU current and returns it. No GPU at all: the chapters' no-GPU error (exit 2). Fewer GPUs than
// ranks on a host: one line naming the rank and the GPUs its host shows (exit 2).
ladder::GpuInfo take_rank_gpu(const World& world);

// Two ranks on one GPU (each sees one GPU, and it is the same): one line naming them (exit 2), before NCCL refuses
// it with a message of its own.
void require_distinct_gpus(const World& world, const ladder::GpuInfo& gpu);

}  // namespace ch07
