// How names from a trace are shown in the terminal: escaped, shortened, and as wide as the terminal. Every view and
// table prints through these, so one rule holds everywhere.
#pragma once

#include <cstddef>
#include <string>

namespace ladder {

// `s` with every control byte (NUL, ESC, CR, LF, ...; < 0x20 and 0x7f) written as \xHH: names come from the trace
// file, and a name printed raw could move the terminal's cursor or forge lines. Every view prints names through it.
std::string printable(const std::string& s);

// A demangled kernel name without what a reader does not need in a table: the return type, anonymous namespaces and
// the parameter list ("void ch01::(anonymous namespace)::add_bias_plain<float>(const float*, ...)" ->
// "ch01::add_bias_plain<float>").
std::string kernel_display_name(std::string name);

// `name` cut to `width` characters (at least 4), the last three "..." when it was longer.
std::string shortened(const std::string& name, size_t width);

// The terminal's width from $COLUMNS or the tty, else 100; at most 1000 (--width's range is 40..1000).
int terminal_width();

}  // namespace ladder
