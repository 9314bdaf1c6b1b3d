// See sizes.h.
#include "trace/renderers/sizes.h"

#include <fmt/format.h>

#include <cmath>

namespace ladder {

namespace {

struct Unit {
  double bytes;
  const char* name;
};
constexpr Unit kUnits[] = {{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}};

}  // namespace

std::string size_text(double b) {
  for (const Unit& u : kUnits) {
    if (std::fabs(b) >= u.bytes) return fmt::format("{:.2f} {}", b / u.bytes, u.name);
  }
  return fmt::format("{:.0f} B", b);
}

}  // namespace ladder
