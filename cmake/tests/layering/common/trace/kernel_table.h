// Planted: an analysis including a renderer.
#include "trace/svg.h"
#include "trace/index.h"
