// Where the repository's own files are, for what a chapter prints: the committed reference traces.
#pragma once

#include <string>

namespace ladder {

// Where the committed reference traces are, as a path that works from the current folder: absolute ("<source
// tree>/traces/reference/h100/") when the source tree the binary was built from is still there, else a phrase naming
// that folder.
std::string reference_traces_dir();
// The same for the benchmarks' committed results, bench/results/ (one folder per run, named by date and GPU).
std::string bench_results_dir();

// The ladder-trace built beside this chapter (<build folder>/tools/ladder-trace), as a path from the current folder
// ("build/tools/ladder-trace" when run from the source tree), for the command a chapter prints to open its trace;
// plain "ladder-trace" when it is not there.
std::string ladder_trace_command();

// What a chapter says when there is no GPU: the reason, where our H100 traces are, and the command that shows this
// chapter's, e.g. "no CUDA GPU was found. The traces we recorded on an H100, with what each chapter printed, are in
// /src/ladder/traces/reference/h100/: see this chapter's with build/tools/ladder-trace timeline
// /src/ladder/traces/reference/h100/02_linear.json". `program` is argv[0] (program_name(), chapter/cli.h).
std::string no_gpu_message(const std::string& reason, const std::string& program);

}  // namespace ladder
