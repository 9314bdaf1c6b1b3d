// `ladder-trace open TRACE`: hand one trace file to the Perfetto UI (https://ui.perfetto.dev) from a terminal, the way
// Perfetto's own tools/open_trace_in_ui does. Not part of the trace library: it never reads the trace, it serves its
// bytes once over plain HTTP on the loopback interface.
#pragma once

#include <string>

namespace ladder {

// The one port the UI will fetch a trace from: its Content-Security-Policy allows plain http to 127.0.0.1:9001 only.
inline constexpr int kPerfettoPort = 9001;

// Prints the link that opens `file` in the Perfetto UI as the first line on stdout, opens a browser on it where there
// is one ($BROWSER, else xdg-open under a display; never over ssh, nor with `open_browser` false), then serves the
// file on 127.0.0.1:`port` until one GET has received it whole, and returns. Everything else (other paths, POST
// /status, which the UI probes first, OPTIONS) gets 404. Throws ladder::Error with one line for a file that is
// missing or too large for the UI, and for a port that is taken.
void open_in_perfetto(const std::string& file, bool open_browser = true, int port = kPerfettoPort);

}  // namespace ladder
