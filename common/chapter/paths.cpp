#include "chapter/paths.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace ladder {

namespace {
// `rel` under the source tree this binary was built from (LADDER_SOURCE_DIR, common/chapter/CMakeLists.txt), with a
// trailing slash, when that folder is still there; else a phrase naming the folder.
std::string source_dir(const std::string& rel) {
#ifdef LADDER_SOURCE_DIR
  const std::filesystem::path dir = std::filesystem::path(LADDER_SOURCE_DIR) / rel;
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return dir.string() + "/";
#endif
  return rel + "/ in the ladder's source tree";
}
}  // namespace

std::string ladder_trace_command() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path tool = fs::read_symlink("/proc/self/exe", ec).parent_path() / "tools" / "ladder-trace";
  if (ec || !fs::is_regular_file(tool, ec)) return "ladder-trace";
  const fs::path rel = tool.lexically_relative(fs::current_path(ec));
  return ec || rel.empty() ? tool.string() : rel.string();
}

std::string reference_traces_dir() { return source_dir("traces/reference/h100"); }
std::string bench_results_dir() { return source_dir("bench/results"); }

std::string no_gpu_message(const std::string& reason, const std::string& program) {
  const std::string dir = reference_traces_dir();
  std::string msg = reason + ". The traces we recorded on an H100, with what each chapter printed, are in " + dir;
  // The chapter's first reference trace (01_matmul_add has several, one per size), read with the ladder-trace built
  // beside the chapter.
  namespace fs = std::filesystem;
  const fs::path exe(program);
  const std::string chapter = exe.filename().string();
  std::error_code ec;
  std::vector<std::string> traces;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!chapter.empty() && name.rfind(chapter, 0) == 0 && it->path().extension() == ".json") traces.push_back(name);
  }
  if (traces.empty()) return msg;
  std::sort(traces.begin(), traces.end());
  return msg + ": see this chapter's with " + ladder_trace_command() + " timeline " + dir + traces.front();
}

}  // namespace ladder
