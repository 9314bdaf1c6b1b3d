// Planted: a chapter including a later one.
#include "03_fused_mlp/kernels.cuh"
#include "04_epilogue_mlp/kernels.cuh"
