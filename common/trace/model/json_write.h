// Writing a Trace in the format PyTorch's profiler (Kineto) writes, so that Perfetto, chrome://tracing and our own
// reader open it (json_write.cpp says which details matter and why).
#pragma once

#include <string>

#include "trace/model/trace.h"

namespace ladder {

// Writes the Kineto/PyTorch trace format: top-level keys as Kineto orders them, ts/dur in microseconds printed from
// integer nanoseconds as "us.nnn" relative to base_time_ns, names JSON-escaped (and made valid UTF-8: a byte that is
// not part of a valid sequence becomes U+FFFD), an ac2g flow pair ("s" on the launch call, "f" with "bp":"e" on the
// kernel/memcpy/memset, numeric id = correlation) for every GPU activity whose launch call is in the trace,
// process/thread metadata events ("CPU", "GPU 0", "stream 7 "). Throws TraceError naming the key when a value of
// trace.metadata is not exactly one JSON value.
std::string trace_to_json(const Trace& trace);
// The base time trace_to_json writes ("baseTimeNanoseconds"): the trace's own if it has one, else its first time
// floored to a whole second. A time before it is written as the base.
int64_t written_base_time_ns(const Trace& trace);
// Writes to `path` through a temporary file and a rename, so a crash never leaves half a JSON. Throws TraceError.
void save_trace(const Trace& trace, const std::string& path);

}  // namespace ladder
