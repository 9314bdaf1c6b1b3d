// Planted: ladder-trace including a chapter.
#include "04_epilogue_mlp/kernels.cuh"
#include "trace/model/trace.h"
