#include "chapter/cli.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "gpu/check.h"

namespace ladder {

void add_common_options(CLI::App& app, CommonOptions& o, const std::string& warmup_option) {
  app.add_option("--wait", o.schedule.wait, "profiler schedule: steps run before tracing starts")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option(warmup_option, o.schedule.warmup, "profiler schedule: steps traced and then thrown away")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--active", o.schedule.active, "profiler schedule: steps kept in the trace")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--trace-dir", o.trace_dir, "folder the trace is written to")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();
  app.add_flag("--graph", o.graph, "capture the forward in a CUDA graph and replay it in the profiled steps");
  app.add_flag("--check-only", o.check_only,
               "check the forward against the CPU reference and stop, without the profiler (for compute-sanitizer, "
               "which holds CUPTI itself)");
}

int parse_options(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    // One line that names the option, e.g. "error: --batch: Value 0 not in range [1 - 1048576]".
    std::string msg = e.what();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    std::cerr << "error: " << msg << "\n";
    return 2;
  }
  return -1;
}

void ensure_writable_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UsageError("--trace-dir: cannot create folder '" + dir + "'");
  const fs::path probe = fs::path(dir) / ".write-probe";
  {
    std::ofstream f(probe);
    if (!(f << "ok")) throw UsageError("--trace-dir: folder '" + dir + "' is not writable");
  }
  fs::remove(probe, ec);
}

}  // namespace ladder
