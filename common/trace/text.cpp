// See text.h.
#include "trace/text.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace ladder {

std::string kernel_display_name(std::string name) {
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  for (size_t p; (p = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(p, 23);
  if (!name.empty() && name.back() == ')') {
    int depth = 0;  // find the '(' that opens the parameter list, skipping template arguments
    for (size_t i = 0; i < name.size(); ++i) {
      if (name[i] == '<') ++depth;
      if (name[i] == '>') --depth;
      if (name[i] == '(' && depth == 0 && i > 0 && name[i - 1] != ' ') {  // "Memset (Device)" keeps its words
        name.erase(i);
        break;
      }
    }
  }
  return name;
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string shortened(const std::string& name, size_t width) {
  if (width < 4) width = 4;
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

int terminal_width() {
  // Clamped to --width's range: $COLUMNS comes from the environment, and a row is allocated per column.
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long w = std::strtol(c, &end, 10);
    if (end != c && w >= 40) return static_cast<int>(std::min(w, 1000L));
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) {
    return std::min<int>(ws.ws_col, 1000);
  }
  return 100;
}

}  // namespace ladder
