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

std::string no_gpu_message(const std::string& reason) {
  return reason + ". The traces we recorded on an H100, with what each chapter printed, are in " +
         reference_traces_dir();
}

}  // namespace ladder
