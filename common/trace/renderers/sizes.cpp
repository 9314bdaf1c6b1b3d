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

std::string size_tick(double b, double step) {
  for (const Unit& u : kUnits) {
    if (step >= u.bytes || std::fabs(b) >= u.bytes * 10) {
      // The decimals the spacing needs in this unit: none for a step of 1, 10, 100 units; one for 0.5, 0.2, ...
      const int digits = step >= u.bytes ? 0 : static_cast<int>(std::ceil(-std::log10(step / u.bytes) - 1e-9));
      return fmt::format("{:.{}f} {}", b / u.bytes, digits, u.name);
    }
  }
  return fmt::format("{:.0f} B", b);
}

}  // namespace ladder
