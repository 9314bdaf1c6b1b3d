// Planted: a chapter including a later one (05's op library once included 06's kernels this way).
#include "06_train_mlp/kernels.cuh"
