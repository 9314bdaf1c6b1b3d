// The trace library's one error type. It knows nothing of CUDA, so a tool that only reads traces (ladder-trace) links
// no GPU library; a chapter's run_main reports it like any other error: one line, exit 1.
#pragma once

#include <stdexcept>
#include <string>

namespace ladder {

struct TraceError : std::runtime_error {
  explicit TraceError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ladder
