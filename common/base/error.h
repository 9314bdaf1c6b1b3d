// The ladder's one error hierarchy, at the bottom of common/: no CUDA, no third-party header. Every room throws these
// (the trace reader, the CUDA checks, the options), and a program's main catches `Error` and prints its one line.
#pragma once

#include <stdexcept>
#include <string>

namespace ladder {

// Any failure the ladder reports to its reader. `exit_code` is what a program exits with: 2 for usage problems
// (bad options, no GPU, unwritable trace folder), 1 for everything else.
struct Error : std::runtime_error {
  explicit Error(const std::string& what, int exit_code = 1) : std::runtime_error(what), exit_code(exit_code) {}
  int exit_code;
};

// A usage error: bad input from the reader, reported before any GPU work.
struct UsageError : Error {
  explicit UsageError(const std::string& what) : Error(what, 2) {}
};

// A trace file that cannot be read or written (bad JSON, a field out of range, an unwritable path): exit 1.
struct TraceError : Error {
  explicit TraceError(const std::string& what) : Error(what, 1) {}
};

}  // namespace ladder
