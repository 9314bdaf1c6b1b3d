// Planted: the Hopper room including the chapter room above it, and a chapter.
#include "chapter/chapter.h"
#include "04_epilogue_mlp/kernels.cuh"
#include "gpu/tensor.h"
