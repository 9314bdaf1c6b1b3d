// The fuzz target: any bytes through the trace reader and, when they read as a trace, through every view and through
// the writer and the reader again, which must give back the same events (trace/tests/round_trip.h). A TraceError from
// the first read is the reader's answer to bad input and ends the run quietly; anything else (a crash, a sanitizer
// report, another exception, a trace we wrote that we cannot read back or that reads back different) is a bug. Built two ways (tools/CMakeLists.txt): with LADDER_FUZZ=ON as a libFuzzer binary,
// and always as trace-fuzz-replay, which feeds the committed corpus through this same function under ctest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "trace/diff.h"
#include "trace/index.h"
#include "trace/json_read.h"
#include "trace/json_write.h"
#include "trace/key_averages.h"
#include "trace/steps.h"
#include "trace/tests/round_trip.h"
#include "trace/timeline.h"
#include "trace/trace.h"

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

  // Parse -> write -> parse: what we read, we must be able to write, and read back the same.
  std::string problem;
  try {
    problem = testing::round_trip_difference(t, parse_trace(trace_to_json(t), "fuzz.json written back"));
  } catch (const TraceError& e) {
    problem = e.what();
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "round trip: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
