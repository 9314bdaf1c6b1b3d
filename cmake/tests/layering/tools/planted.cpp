// Planted: ladder-trace including a chapter, and a header of trace/ without its part.
#include "04_epilogue_mlp/kernels.cuh"
#include "trace/model/trace.h"
#include "trace/svg.h"
