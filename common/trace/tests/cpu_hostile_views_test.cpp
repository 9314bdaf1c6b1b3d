// Every view and picture under the hostile-input contract: a trace that reads must draw and print in bounded time and
// memory, as well-formed text, or end in one TraceError. Each case here hung, overflowed or printed garbage once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "base/error.h"
#include "trace/analyses/memory.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/trace.h"
#include "trace/renderers/breakdown_view.h"
#include "trace/renderers/kernels_view.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/memory_svg.h"
#include "trace/renderers/memory_view.h"
#include "trace/renderers/svg.h"
#include "trace/text/text.h"

namespace ladder {
namespace {

// Whether `s` is well-formed UTF-8 (what an XML parser requires of the picture).
bool well_formed_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80                 ? 1
                     : c >= 0xc2 && c <= 0xdf ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

Trace trace_of(const std::string& events) {
  return parse_trace(R"({"traceEvents": [)" + events + "]}", "hostile.json");
}

std::string op(const std::string& name, const std::string& ts, const std::string& dur) {
  return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "pid": 1, "tid": 1, "ts": )" + ts +
         R"(, "dur": )" + dur + "}";
}

std::string mem(const std::string& ts, const std::string& bytes, const std::string& total) {
  return R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" + ts + R"(, "args": {"Bytes": )" + bytes +
         R"(, "Total Allocated": )" + total + R"(, "Total Reserved": )" + total +
         R"(, "Device Type": 1, "Device Id": 0, "Addr": 1}})";
}

TEST(HostileViews, SvgOfAZeroLengthTraceEnds) {
  // One event of dur 0: the window is 0 ns long, and the axis's tick step was 0 (an endless loop).
  const Trace t = trace_of(op("aten::mm", "10", "0"));
  const std::string svg = trace_svg(TraceIndex(t), SvgOptions{});
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(HostileViews, SvgFocusOnAZeroDurationOpEnds) {
  const Trace t = trace_of(op("aten::linear", "10", "5") + "," + op("aten::t", "12", "0"));
  SvgOptions opt;
  opt.focus = "aten::t";
  const std::string svg = trace_svg(TraceIndex(t), opt);
  EXPECT_NE(svg.find("aten::t"), std::string::npos);
}

// Each op inside the one before: the picture's rows are the nesting depths. Its time is linear in the events however
// deep they nest: 32 times the depth takes about 45 times as long here (515 times when every op counted its ancestors
// again). Timed as a ratio, the best of three runs each: a loaded machine slows both cases alike.
TEST(HostileViews, SvgOfDeepNestingStaysLinear) {
  const auto nested = [](int depth) {
    std::string events;
    for (int i = 0; i < depth; ++i) {
      if (i > 0) events += ",";
      events += op("op" + std::to_string(i % 7), std::to_string(10 + i), std::to_string(4 * depth - 2 * i));
    }
    return trace_of(events);
  };
  const auto seconds = [](const Trace& t) {
    double best = 1e9;
    for (int run = 0; run < 3; ++run) {
      const auto start = std::chrono::steady_clock::now();
      const std::string svg = trace_svg(TraceIndex(t), SvgOptions{});
      EXPECT_NE(svg.find("</svg>"), std::string::npos);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  };
  const double a = seconds(nested(1000)), b = seconds(nested(32000));
  EXPECT_LT(b, 320 * a) << a << " s at depth 1,000, " << b << " s at depth 32,000";
}

TEST(HostileViews, SvgCutsNamesBetweenCharacters) {
  // A long CJK name on a narrow bar: the label is cut, never inside a character's bytes.
  std::string name;
  for (int i = 0; i < 60; ++i) name += "\xe8\xa8\x88";  // U+8A08
  const Trace t = trace_of(op(name, "0", "100") + "," + op("aten::mm", "100", "900"));
  const std::string svg = trace_svg(TraceIndex(t), SvgOptions{});
  EXPECT_TRUE(well_formed_utf8(svg));
}

TEST(HostileViews, SvgDropsWhatXmlForbids) {
  // Control characters (C0, C1) and U+FFFF reach a name through \u escapes; the picture drops them. Bytes that are
  // not UTF-8 cannot come from the reader (it refuses them), but the escaping would write them as U+FFFD.
  const Trace t = trace_of(op("bad\\u0001name\\u009b\\uffff", "0", "100"));
  const std::string svg = trace_svg(TraceIndex(t), SvgOptions{});
  EXPECT_TRUE(well_formed_utf8(svg));
  EXPECT_NE(svg.find("badname"), std::string::npos);
  EXPECT_EQ(svg.find("\xc2\x9b"), std::string::npos);  // U+009B, CSI
  EXPECT_EQ(svg.find("\xef\xbf\xbf"), std::string::npos);  // U+FFFF
  EXPECT_EQ(xml_text("a\xff<b"), "a\xef\xbf\xbd&lt;b");
}

TEST(HostileViews, MemoryBytesOutOfRangeAreAnError) {
  // 2^60 bytes is no allocator's: read like a "ts" past range, one line naming the event and the field.
  for (const auto& [bytes, total] : {std::pair{"1152921504606846976", "0"}, std::pair{"1e30", "0"},
                                     std::pair{"8", "1152921504606846976"}, std::pair{"8", "-1e300"}}) {
    try {
      (void)trace_of(op("aten::empty", "0", "10") + "," + mem("1", bytes, total));
      ADD_FAILURE() << bytes << " " << total << " read";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("is out of range"), std::string::npos) << e.what();
    }
  }
}

TEST(HostileViews, MemorySvgOfLargeTotalsEnds) {
  // Totals near the range's top with a one-byte swing: the grid's step is small next to the levels.
  const Trace t = trace_of(op("aten::empty", "0", "10") + "," + mem("1", "1", "1125899906842623") + "," +
                           mem("2", "-1", "1125899906842622"));
  const std::string svg = memory_svg(TraceIndex(t), SvgOptions{});
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(HostileViews, MemorySumsPastRangeAreAnError) {
  // Without totals the levels are Bytes summed: 20,000 allocations of 2^49 bytes each pass 2^63.
  std::string events = op("aten::empty", "0", "100000");
  for (int i = 0; i < 20000; ++i) {
    events += R"(,{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" + std::to_string(1 + i) +
              R"(, "args": {"Bytes": 562949953421312, "Device Type": 1, "Device Id": 0, "Addr": )" +
              std::to_string(i) + "}}";
  }
  const Trace t = trace_of(events);
  EXPECT_THROW((void)memory_report(TraceIndex(t)), TraceError);
}

TEST(HostileViews, BreakdownOfATraceWithoutEventsIsOneLine) {
  // Found by the fuzz target: the text table read the last row of none (the command line refuses such a trace
  // before any view; a program calling the view does not).
  const Trace t = parse_trace(R"({"traceEvents": []})", "empty.json");
  EXPECT_THROW((void)breakdown_view(TraceIndex(t), -1, OutputFormat::Text), TraceError);
}

TEST(HostileViews, AStepTheTraceDoesNotHoldIsOneLine) {
  // Found by the fuzz target: kernels_view read past the steps of a trace that has none.
  const Trace empty = parse_trace(R"({"traceEvents": []})", "empty.json");
  const TraceIndex index(empty);
  KernelViewOptions opt;
  opt.step = 0;
  EXPECT_THROW((void)kernels_view(index, opt), UsageError);
  EXPECT_THROW((void)breakdown_view(index, 3, OutputFormat::Csv), UsageError);
  const Trace t = trace_of(op("aten::empty", "0", "10") + "," + mem("1", "8", "8"));
  EXPECT_THROW((void)memory_report(TraceIndex(t), 1), UsageError);
}

TEST(HostileViews, SummaryOfOpsLongerThanTenDaysEnds) {
  // Found by the fuzz target after 28 minutes: a share of CPU time of an op over 9.2e14 ns (10.7 days) overflowed
  // part * 10000 (UBSan at key_averages.cpp:59).
  const Trace t = trace_of(op("aten::mm", "0", "4423523365260.251") + "," + op("aten::add", "0", "1"));
  const std::string out = summary_table(TraceIndex(t), TableOptions{});
  EXPECT_NE(out.find("100.00%"), std::string::npos) << out;
}

TEST(HostileViews, MemoryViewOfRecordsOutsideEveryStepIsOneLine) {
  // Found by the fuzz target: with every [memory] record outside the steps, or every peak negative (levels summed
  // from Bytes), the view named step -1.
  const Trace outside = trace_of(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, )"
                                 R"("tid": 1, "ts": 0, "dur": 10},)" + mem("50", "8", "8"));
  EXPECT_THROW((void)memory_view(TraceIndex(outside), -1, OutputFormat::Text), TraceError);
  const Trace negative = trace_of(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, )"
                                  R"("tid": 1, "ts": 0, "dur": 10},)" +
                                  std::string(R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5, )"
                                              R"("args": {"Bytes": -64, "Device Type": 1, "Device Id": 0}})"));
  EXPECT_NE(memory_view(TraceIndex(negative), -1, OutputFormat::Text).find("ProfilerStep#1"), std::string::npos);
}

TEST(Text, PrintableEscapesC1ControlsAndBrokenUtf8) {
  EXPECT_EQ(printable("a\xc2\x9b[2Jb"), "a\\xc2\\x9b[2Jb");  // U+009B, CSI
  EXPECT_EQ(printable("a\x9b[2Jb"), "a\\x9b[2Jb");           // a lone CSI byte
  EXPECT_EQ(printable("\x1b]0;x\x07"), "\\x1b]0;x\\x07");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe8\xa8\x88"), "caf\xc3\xa9 \xe8\xa8\x88");  // letters pass
}

TEST(Text, ShortenedKeepsCharactersWhole) {
  std::string name;
  for (int i = 0; i < 10; ++i) name += "\xc3\xa9";  // 10 characters, 20 bytes
  EXPECT_EQ(shortened(name, 10), name);
  EXPECT_EQ(shortened(name, 8), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
  EXPECT_EQ(shortened("ladder::gelu_mul", 8), "ladde...");
  EXPECT_EQ(without_namespace("ladder::gelu_mul"), "gelu_mul");
  EXPECT_EQ(without_namespace("at::native::f<c10::Half>"), "f<c10::Half>");
}

TEST(Text, TickStepIsNeverZero) {
  EXPECT_EQ(tick_step(0, 10), 1.0);
  EXPECT_EQ(tick_step(-5, 10), 1.0);
  EXPECT_EQ(tick_step(1000, 10), 100.0);
  EXPECT_EQ(tick_step(std::numeric_limits<double>::infinity(), 10), 1.0);
  EXPECT_EQ(tick_step(std::numeric_limits<double>::quiet_NaN(), 10), 1.0);
}

}  // namespace
}  // namespace ladder
