// The trace library's errors are the ladder's (base/error.h): TraceError is an Error, so a program's main reports it
// like any other, one line, exit 1.
#pragma once

#include "base/error.h"
