// Planted: what common/base must never include (cmake/layering.cmake fails on each line).
#include <torch/torch.h>
#include <Python.h>
#include <mma.h>
#include <vector>
