// Planted: a chapter including an earlier chapter's internals (04's launch helper), beside what it may include: 04's
// API (kernels.cuh) and the Hopper room.
#include "04_epilogue_mlp/kernels.cuh"
#include "04_epilogue_mlp/launch.h"
#include "hopper/pipeline.cuh"
