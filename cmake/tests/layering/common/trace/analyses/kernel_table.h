// Planted: an analysis including a renderer.
#include "trace/renderers/svg.h"
#include "trace/model/index.h"
