// The fuzz target: any bytes through the trace reader and, when they read as a trace, through every view. A
// TraceError is the reader's answer to bad input and ends the run quietly; anything else (a crash, a sanitizer report,
// another exception) is a bug. Built two ways (tools/CMakeLists.txt): with LADDER_FUZZ=ON as a libFuzzer binary,
// and always as trace-fuzz-replay, which feeds the committed corpus through this same function under ctest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/analysis.h"
#include "trace/error.h"
#include "trace/index.h"
#include "trace/trace.h"
#include "trace/views.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ladder;
  Trace t;
  try {
    t = parse_trace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const TraceError&) {
    return 0;
  }
  const TraceIndex index(t);
  (void)summary_table(index);
  (void)step_stats(index);
  (void)regime_table(index);
  (void)timeline(t, -1, 80);
  (void)timeline(t, 0, 80);
  (void)diff_traces(t, t);
  return 0;
}
