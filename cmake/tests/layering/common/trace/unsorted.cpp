// Planted: a file of trace/ in none of its parts.
#include "trace/model/trace.h"
