// `ladder-trace open TRACE`: hand one trace file to the Perfetto UI (https://ui.perfetto.dev) from a terminal, the way
// Perfetto's own tools/open_trace_in_ui does. Not part of the trace library: it serves the file's bytes once over plain
// HTTP on the loopback interface (`check`, the caller's, reads the trace first).
#pragma once

#include <functional>
#include <string>

namespace ladder {

// The one port the UI will fetch a trace from: its Content-Security-Policy allows plain http to 127.0.0.1:9001 only.
inline constexpr int kPerfettoPort = 9001;

// Prints the link that opens `file` in the Perfetto UI as the first line on stdout, opens a browser on it where there
// is one ($BROWSER, else xdg-open under a display; never over ssh, nor with `open_browser` false), then serves the
// file on 127.0.0.1:`port` until one GET from the Perfetto UI (its Origin, a Host of 127.0.0.1 or localhost) has
// received it whole, and returns. The path is matched decoded or not (the UI decodes the link's url= before it
// fetches); a gzip file goes out as application/gzip. The UI's preflight OPTIONS gets its CORS answer; a GET of the
// file from any other origin, or with none, gets 403; other paths and POST /status (the UI probes it first) get 404;
// none of them ends the serving. Throws ladder::Error with one line for a file that is missing or too large for the
// UI, and for a port that is taken. `check` runs once the file is known to be readable and small enough, before the
// port is taken and the link printed: what it throws ends the command with nothing served.
void open_in_perfetto(const std::string& file, bool open_browser = true, int port = kPerfettoPort,
                      const std::function<void()>& check = {});

}  // namespace ladder
