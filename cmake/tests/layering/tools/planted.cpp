// Planted: ladder-trace including a chapter.
#include "04_epilogue_mlp/kernels.cuh"
#include "trace/trace.h"
