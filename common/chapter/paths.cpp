#include "chapter/paths.h"

#include <filesystem>

namespace ladder {

std::string reference_traces_dir() {
  // LADDER_SOURCE_DIR: the source tree this binary was built from (common/chapter/CMakeLists.txt).
#ifdef LADDER_SOURCE_DIR
  const std::filesystem::path dir = std::filesystem::path(LADDER_SOURCE_DIR) / "traces" / "reference" / "h100";
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return dir.string() + "/";
#endif
  return "traces/reference/h100/ in the ladder's source tree";
}

std::string ladder_trace_command() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path tool = fs::read_symlink("/proc/self/exe", ec).parent_path() / "tools" / "ladder-trace";
  if (ec || !fs::is_regular_file(tool, ec)) return "ladder-trace";
  const fs::path rel = tool.lexically_relative(fs::current_path(ec));
  return ec || rel.empty() ? tool.string() : rel.string();
}

std::string no_gpu_message(const std::string& reason) {
  return reason + ". The traces we recorded on an H100, with what each chapter printed, are in " +
         reference_traces_dir();
}

}  // namespace ladder
