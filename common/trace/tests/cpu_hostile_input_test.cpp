// The reader against hostile or odd input: every case here crashed, hit undefined behaviour, or was silently
// dropped by the old DOM reader. Each must now load, or fail with one line that names the file, the event and the
// field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"
#include "trace/model/trace.h"

namespace ladder {
namespace {

const std::string kHostile = std::string(LADDER_TEST_DATA) + "/hostile/";

// The message of the TraceError that loading `file` (in tests/data/hostile) throws; "" when it loads.
std::string load_error(const std::string& file) {
  try {
    (void)load_trace(kHostile + file);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

std::string deep(const std::string& open, const std::string& close, int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

const std::string kEvent =
    R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1.5, "dur": 2)";

TEST(HostileInput, DeepNestingOutsideEventsIsKeptAsText) {
  // 75,000 nested lists under a top-level key (150 KB) overflowed the stack in json::dump and the DOM's destructor.
  const std::string nest = deep("[", "]", 75000);
  const Trace t = parse_trace(R"({"traceEvents": [)" + kEvent + R"(}], "x": )" + nest + "}", "deep.json");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.metadata.at("x"), nest);
}

TEST(HostileInput, DeepNestingInsideAnEventIsSkipped) {
  const std::string nest = deep("{\"a\": [", "]}", 50000);
  const Trace t = parse_trace(R"({"traceEvents": [)" + kEvent + R"(, "args": {"Input Dims": [)" +
                                  deep("[", "]", 50000) + R"(], "deep": )" + nest + R"(}, "extra": )" + nest + "}]}",
                              "deep_event.json");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].name, "aten::mm");
}

TEST(HostileInput, UnbalancedDeepNestingIsOneLineError) {
  try {
    (void)parse_trace(R"({"traceEvents": [], "x": )" + std::string(100000, '['), "open.json");
    FAIL() << "should have thrown";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("open.json is not valid JSON"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(HostileInput, OutOfRangeNumbersNameFileEventAndField) {
  // ts/dur of 1e308 and ts in "ns as us" (x 1e6) overflowed int64 in us_to_ns; 1e308 in grid was get<int>() UB; a
  // shape whose product overflows int64 was UB later, in numel.
  const struct {
    const char* file;
    const char* expected;
  } cases[] = {
      {"ts_out_of_range.json", R"(event 2 ("huge"): "ts" 1e+308 is out of range)"},
      {"ts_times_1e6.json", R"(event 2 ("late"): "ts" 4.423609560722615e+18 is out of range)"},
      {"dur_out_of_range.json", R"(event 2 ("long"): "dur" 1e+308 is out of range)"},
      {"grid_out_of_range.json", R"(event 2 ("k"): "grid" 1e+308 is out of range)"},
      {"stream_out_of_range.json", R"(event 2 ("k"): "stream" 4294967303 is out of range)"},
      {"dims_overflow.json", R"(event 2 ("aten::mm"): "Input Dims" 4294967296 is negative or its product overflows)"},
      {"dims_negative.json", R"(event 2 ("aten::mm"): "Input Dims" -1 is negative or its product overflows)"},
      {"negative_dur.json", R"(event 2 ("backwards"): "dur" -5 is negative)"},
      {"trace_name_number.json", R"("traceName" must be a string)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string what = load_error(c.file);
    EXPECT_NE(what.find(kHostile + c.file), std::string::npos) << what;
    EXPECT_NE(what.find(c.expected), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(HostileInput, UnusableEventsAreCountedPerReason) {
  const Trace t = load_trace(kHostile + "skipped_events.json");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.process_name, "python3");
  // Kineto's bookkeeping ("Spans" X and M events, flows, the instant with pid "") is not counted.
  EXPECT_EQ(t.load_note, "skipped 8 events of " + kHostile +
                             "skipped_events.json: 2 not an object, 1 with an unknown ph, 1 without a numeric dur, 2 "
                             "without a numeric ts, 2 without an integer pid and tid");
}

TEST(HostileInput, NothingUsableIsAnError) {
  const std::string what = load_error("all_skipped.json");
  EXPECT_NE(what.find("all_skipped.json has no usable event: skipped 3 events: 1 not an object"), std::string::npos)
      << what;
}

// Every real trace the tree holds, torch's (with NCCL, CUDA graphs, several streams) and the ladder's: no event is
// skipped, none is taken for a copy.
TEST(HostileInput, RealTracesLoadWithoutANote) {
  int files = 0;
  for (const char* dir : {LADDER_TEST_DATA, LADDER_SOURCE_DIR "/traces/reference"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      const std::string path = entry.path().string();
      const auto ends = [&](const std::string& end) {
        return path.size() >= end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
      };
      const bool json = ends(".json") || ends(".json.gz");
      const bool oracle = entry.path().filename().string().find("figures") != std::string::npos ||
                          entry.path().filename() == "hta_kernels.json";  // HTA's answers, not traces
      if (!json || oracle || path.find("/hostile/") != std::string::npos) continue;
      SCOPED_TRACE(path);
      const Trace t = load_trace(entry.path().string());
      EXPECT_FALSE(t.events.empty());
      EXPECT_EQ(t.load_note, "");
      ++files;
    }
  }
  EXPECT_GE(files, 100);
}

// The same kernel and op written twice (two files joined): the copies are skipped, and the note counts them. Two
// kernels of one CUDA graph share their launch's correlation and are kept; so are two id-less events alike.
TEST(HostileInput, ExactCopiesAreSkippedAndCounted) {
  const std::string op = R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,)"
                         R"( "args": {"External id": 4}})";
  const std::string k1 = R"({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 20,)"
                         R"( "args": {"correlation": 9, "External id": 4}})";
  const std::string k2 = R"({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 55, "dur": 20,)"
                         R"( "args": {"correlation": 9, "External id": 4}})";
  const std::string plain = R"({"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 5,)"
                            R"( "dur": 1})";
  const Trace t = parse_trace(R"({"traceEvents": [)" + op + "," + k1 + "," + k2 + "," + plain + "," + k1 + "," + op +
                                  "," + plain + "," + k1 + "]}",
                              "copies.json");
  EXPECT_EQ(t.load_note, "skipped 3 events of copies.json: 3 exact copies of another event");
  ASSERT_EQ(t.events.size(), 5u);
  int kernels = 0, plains = 0;
  for (const Event& e : t.events) {
    kernels += e.cat == Cat::Kernel;
    plains += e.name == "f";
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(plains, 2);
  EXPECT_EQ(t.events[0].name, "aten::mm");  // the first of each is kept, in the file's order
  EXPECT_EQ(t.events[1].ts_ns, 30000);
}

// What the writer does not write does not tell two events apart either: two ranges alike but for a "correlation"
// (the format carries none on a range) are one copied, so the trace reads back as it was read.
TEST(HostileInput, CopiesAreJudgedOnWhatTheWriterWrites) {
  const auto range = [](int correlation) {
    return R"({"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 10, "dur": 5,)"
           R"( "args": {"External id": 3, "correlation": )" +
           std::to_string(correlation) + "}}";
  };
  const Trace t = parse_trace(R"({"traceEvents": [)" + range(7) + "," + range(8) + "]}", "ranges.json");
  EXPECT_EQ(t.events.size(), 1u);
  const Trace back = parse_trace(trace_to_json(t), "back.json");
  EXPECT_EQ(back.events.size(), t.events.size());
}

TEST(HostileInput, BareArrayIsAChromeTrace) {
  const Trace t = load_trace(kHostile + "bare_array.json");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].name, "ProfilerStep#1");
  EXPECT_EQ(t.events[1].ts_ns, 110000);
  EXPECT_EQ(t.events[1].dur_ns, 10250);
}

TEST(HostileInput, BrokenJsonNamesFileAndOffset) {
  const struct {
    std::string text, expected;
  } cases[] = {
      {R"({"traceEvents": [1,]})", "x.json is not valid JSON: expected a value at byte 19"},
      {R"({"traceEvents": []} x)", "unexpected text after the end at byte 20"},
      {"{\"traceEvents\": [], \"n\": \"\xff\"}", "invalid UTF-8 in a string"},
      {R"({"traceEvents": [], "n": "\ud800"})", "unpaired UTF-16 surrogate"},
      {R"({"traceEvents": [], "n": 01})", "invalid number \"01\""},
      {R"({"traceEvents": [], "n": 1.e5})", "invalid number \"1.e5\""},
      {R"({"traceEvents": [], "n": tru})", "invalid literal"},
      {"", "the file is empty"},
      {R"({"hello": 1})", "has no \"traceEvents\" list"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      (void)parse_trace(c.text, "x.json");
      ADD_FAILURE() << "should have thrown";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

TEST(HostileInput, StringsAndMetadataDecode) {
  const Trace t = parse_trace(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a\"\\\/\t\u00e9\ud83d\ude00\u4e2d", "pid": 1,)"
      R"( "tid": 1, "ts": 0, "dur": 0}], "meta": { "k" : [1, 2.5e3, "s p", true, null] }})",
      "s.json");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].name, "a\"\\/\t\xc3\xa9\xf0\x9f\x98\x80\xe4\xb8\xad");
  EXPECT_EQ(t.metadata.at("meta"), R"({"k":[1,2.5e3,"s p",true,null]})");
}

// load_trace reads the file in 1 MiB chunks: tokens that straddle a chunk boundary must read as in memory.
TEST(HostileInput, FileInChunksReadsAsInMemory) {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 20000; ++i) {
    text += (i ? ",\n" : "") +
            std::string(R"j({"ph": "X", "cat": "kernel", "name": "void k<\u00e9>(float*)", "pid": 0,)j") +
            R"( "tid": 7, "ts": )" + std::to_string(1000 + i) + ".125, \"dur\": 0.5, \"args\": {\"grid\": [" +
            std::to_string(i) + R"(, 1, 1], "correlation": )" + std::to_string(i) + "}}";
  }
  text += "], \"tail\": \"" + std::string(5000, 'x') + "\"}";
  ASSERT_GT(text.size(), 2u << 20);
  const std::string path = ::testing::TempDir() + "/chunks_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path, std::ios::binary) << text;
  const Trace from_file = load_trace(path);
  const Trace from_text = parse_trace(text, path);
  std::filesystem::remove(path);
  ASSERT_EQ(from_file.events.size(), 20000u);
  EXPECT_EQ(trace_to_json(from_file), trace_to_json(from_text));
  EXPECT_EQ(from_file.events[19999].ts_ns, 20999125);
  EXPECT_EQ(from_file.events[19999].gpu.grid[0], 19999);
  EXPECT_EQ(from_file.metadata.at("tail").size(), 5002u);
}

}  // namespace
}  // namespace ladder
