// Planted: a file of trace/ in a folder that is no part of it.
#include "trace/text/text.h"
