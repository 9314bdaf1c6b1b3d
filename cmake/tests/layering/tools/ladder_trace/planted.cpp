// Planted: a subcommand of ladder-trace including a chapter.
#include "03_fused_mlp/kernels.cuh"
#include "trace/model/trace.h"
