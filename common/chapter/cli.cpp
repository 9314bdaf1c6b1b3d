#include "chapter/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/error.h"

namespace ladder {

namespace {
// Digits with an optional leading minus, and nothing else: "1e9", "0x10", " 5" and "" are not whole numbers here.
bool is_integer_text(const std::string& s, bool allow_minus) {
  size_t i = allow_minus && !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}
}  // namespace

CLI::Validator int_range(int64_t lo, int64_t hi, const std::string& hidden_name) {
  const std::string bounds = (hidden_name.empty() ? "" : hidden_name + ": ") + "must be an integer from " +
                             std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = is_integer_text(s, true) ? std::strtoll(s.c_str(), &end, 10) : 0;
        if (!is_integer_text(s, true) || errno == ERANGE || v < lo || v > hi) return bounds + ", got " + s;
        return "";
      },
      "[" + std::to_string(lo) + ".." + std::to_string(hi) + "]");
}

CLI::Validator uint64_any() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        errno = 0;
        if (is_integer_text(s, false)) {
          std::strtoull(s.c_str(), nullptr, 10);
          if (errno != ERANGE) return "";
        }
        return "must be an integer from 0 to 18446744073709551615, got " + s;
      },
      "[0..2^64-1]");
}

void add_common_options(CLI::App& app, CommonOptions& o, const std::string& warmup_option) {
  app.add_option("--wait", o.schedule.wait, "profiler schedule: steps run before tracing starts")
      ->check(int_range(0, 1000))
      ->capture_default_str();
  app.add_option(warmup_option, o.schedule.warmup, "profiler schedule: steps traced and then thrown away")
      ->check(int_range(0, 1000))
      ->capture_default_str();
  app.add_option("--active", o.schedule.active, "profiler schedule: steps kept in the trace")
      ->check(int_range(1, 1000))
      ->capture_default_str();
  app.add_option("--trace-dir", o.trace_dir, "folder the trace is written to")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the random inputs")->check(uint64_any())->capture_default_str();
  app.add_flag("--graph", o.graph, "capture the forward in a CUDA graph and replay it in the profiled steps");
  app.add_flag("--check-only", o.check_only,
               "check the forward against the CPU reference and stop, without the profiler (for compute-sanitizer, "
               "which holds CUPTI itself)");
}

namespace {
std::string& program() {
  static std::string name;
  return name;
}
}  // namespace

const std::string& program_name() { return program(); }

int parse_options(CLI::App& app, int argc, const char* const* argv) {
  if (argc > 0 && argv[0]) {
    program() = argv[0];
    app.name(argv[0]);
  }
  // --help wins wherever it stands: CLI11 stops at the first bad option, so `--batch 0 --help` would print the error
  // and not the help the reader asked for.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << app.help();
      return 0;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    // One line that names the option, e.g. "error: --batch: must be an integer from 1 to 2147483647, got 0".
    std::string msg = e.what();
    if (msg.rfind(": ", 0) == 0) msg.erase(0, 2);  // a hidden option's error: CLI11 leaves its name empty
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    std::cerr << "error: " << msg << "\n";
    return 2;
  }
  return -1;
}

void check_trace_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  // Walk up to the nearest part of the path that exists: that one must be a folder we can create things in.
  while (!p.empty() && !fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  if (!fs::is_directory(p, ec)) throw UsageError("--trace-dir: cannot create folder '" + dir + "'");
  if (access(p.c_str(), W_OK | X_OK) != 0) throw UsageError("--trace-dir: folder '" + dir + "' is not writable");
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
