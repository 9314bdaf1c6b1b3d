// Reading a trace file, ours or one torch.profiler wrote, into the event model (trace.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/model/input.h"
#include "trace/model/trace.h"

namespace ladder {

// Reads a trace file written by us or by torch.profiler (or any Chrome trace: an object with "traceEvents", or a bare
// list of events) back into the model, streaming: memory is the events, not the text. Events with string pid/tid
// (Kineto's bookkeeping lanes) and metadata events are skipped; unusable ones are counted into load_note. Throws
// TraceError, one line naming the file (and the event and field), on bad JSON, out-of-range numbers, a negative dur,
// or when no usable event is left.
// gzip is read by its magic bytes, "-" is standard input (trace/model/input.h); a syntax error says byte, line and
// column.
Trace load_trace(const std::string& path, uint64_t max_json_bytes = kDefaultMaxJsonBytes);
// The same from text in memory; `name` stands for the file in messages.
Trace parse_trace(std::string_view text, const std::string& name);

}  // namespace ladder
