// See text.h.
#include "trace/text/text.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace ladder {

namespace {

// The well-formed UTF-8 sequence at s[i] (Unicode's table 3-7: no overlong form, no surrogate, nothing past
// U+10FFFF): its length, and its code point in `cp`; 0 when the byte there starts none.
size_t utf8_at(const std::string& s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return b(k) >= lo && b(k) <= hi; };
  if (c >= 0xc2 && c <= 0xdf && cont(1)) {
    cp = (c & 0x1f) << 6 | (b(1) & 0x3f);
    return 2;
  }
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    if (!cont(1, lo, hi) || !cont(2)) return 0;
    cp = (c & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    if (!cont(1, lo, hi) || !cont(2) || !cont(3)) return 0;
    cp = (c & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
    return 4;
  }
  return 0;
}

bool is_control(uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f); }

// East Asian wide and fullwidth characters take two columns (the ranges fmt's width uses).
int columns(uint32_t cp) {
  const bool wide = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
                    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
                    (cp >= 0xfe30 && cp <= 0xfe6f) || (cp >= 0xff00 && cp <= 0xff60) ||
                    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
                    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd);
  return wide ? 2 : 1;
}

}  // namespace

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

std::string without_namespace(const std::string& name) {
  size_t cut = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {  // the last "::" before any template argument or parameter list
    if (name[i] == '<' || name[i] == '(' || name[i] == ' ') break;
    if (name[i] == ':' && name[i + 1] == ':') cut = i + 2;
  }
  return cut < name.size() ? name.substr(cut) : name;
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_at(s, i, cp);
    if (n == 0 || is_control(cp)) {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      }
      i += std::max<size_t>(n, 1);
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string xml_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_at(s, i, cp);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD, the replacement character
      ++i;
      continue;
    }
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (!is_control(cp) && cp != 0xfffe && cp != 0xffff) out.append(s, i, n);  // XML 1.0 forbids the last two
    }
    i += n;
  }
  return out;
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_at(s, i, cp);
    w += n == 0 ? 1 : static_cast<size_t>(columns(cp));
    i += std::max<size_t>(n, 1);
  }
  return w;
}

std::string shortened(const std::string& name, size_t width) {
  if (width < 4) width = 4;
  if (display_width(name) <= width) return name;
  size_t w = 0, i = 0;
  while (i < name.size()) {  // the longest head of whole characters that leaves room for "..."
    uint32_t cp = 0;
    const size_t n = utf8_at(name, i, cp);
    const size_t c = n == 0 ? 1 : static_cast<size_t>(columns(cp));
    if (w + c > width - 3) break;
    w += c;
    i += std::max<size_t>(n, 1);
  }
  return name.substr(0, i) + "...";
}

double tick_step(double span, int want) {
  const double raw = std::isfinite(span) && want > 0 ? std::max(span / want, 1.0) : 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::vector<AxisTick> time_axis_ticks(int64_t span_ns, int want) {
  const double step = tick_step(static_cast<double>(span_ns), want);
  const int decimals = step >= 1000 ? 0 : step >= 100 ? 1 : step >= 10 ? 2 : 3;
  std::vector<AxisTick> out;
  for (int k = 0;; ++k) {
    const double t = k * step;
    if (t > static_cast<double>(span_ns) + 0.5) break;
    out.push_back({static_cast<int64_t>(std::llround(t)), fmt::format("{:.{}f}{}", t / 1e3, decimals, k ? "" : " us")});
  }
  return out;
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
