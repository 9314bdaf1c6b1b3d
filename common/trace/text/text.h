// How names from a trace are shown, in the terminal and in the SVG pictures: escaped, shortened, measured, and the
// axis ticks they sit on. Every view, table and picture prints through these, so one rule holds everywhere. Names are
// UTF-8 (a torch trace holds whatever its user named a range): nothing here cuts a character in half.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ladder {

// `s` with every control character (C0 < 0x20, DEL, the C1 range U+0080..U+009F) and every byte that is not part of
// well-formed UTF-8 written as \xHH, byte by byte: names come from the trace file, and a name printed raw could move
// the terminal's cursor or forge lines (a lone 0x9b byte is CSI to an 8-bit terminal). Every view prints names
// through it.
std::string printable(const std::string& s);

// `s` for the text or an attribute of an SVG picture: & < > " escaped, control characters dropped, and bytes that are
// not well-formed UTF-8 written as U+FFFD, so the picture is always well-formed XML.
std::string xml_text(const std::string& s);

// `s` as one CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a line break, as is otherwise.
std::string csv_cell(const std::string& s);

// `s` as a JSON string: quotes, backslashes and every control byte escaped (names come from the trace file).
std::string json_string(const std::string& s);

// The columns `s` takes in a monospace font: one per character, two for the wide (CJK) ones, as fmt counts them.
size_t display_width(const std::string& s);

// A demangled kernel name without what a reader does not need in a table: the return type, anonymous namespaces and
// the parameter list ("void ch01::(anonymous namespace)::add_bias_plain<float>(const float*, ...)" ->
// "ch01::add_bias_plain<float>").
std::string kernel_display_name(std::string name);

// `name` without its namespaces ("ladder::gelu_mul" -> "gelu_mul", "at::native::f<c10::Half>" -> "f<c10::Half>"):
// what a picture shows first when the whole name does not fit.
std::string without_namespace(const std::string& name);

// `name` cut to `width` columns (at least 4), the last three "..." when it was longer; never inside a character.
std::string shortened(const std::string& name, size_t width);

// Axis ticks: 1, 2 or 5 times a power of ten, for about `want` ticks over `span` units, never less than one unit (a
// zero or negative span gets 1).
double tick_step(double span, int want);

// The ticks of a time axis over [0, span_ns], tick_step apart, each with its label in us with as many decimals as the
// step needs; the first says its unit ("0.0 us", "0.5", "1.0", ...). Both pictures' axes are these.
struct AxisTick {
  int64_t offset_ns = 0;
  std::string label;
};
std::vector<AxisTick> time_axis_ticks(int64_t span_ns, int want);

// The terminal's width from $COLUMNS or the tty, else 100; at most 1000 (--width's range is 40..1000).
int terminal_width();

}  // namespace ladder
