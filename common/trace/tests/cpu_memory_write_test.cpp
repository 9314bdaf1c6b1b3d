// Our traces carry the device allocator's [memory] events (gpu/allocator.h records them through the profiler): the
// writer puts them out with torch's fields, and the reader and the memory view take them back as from a
// profile_memory=True trace.
#include <gtest/gtest.h>

#include <string>

#include "trace/analyses/memory.h"
#include "trace/model/json_read.h"
#include "trace/model/json_write.h"

using namespace ladder;

namespace {

Event range(const std::string& name, Cat cat, int64_t ts, int64_t dur) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 42;
  e.tid = 7;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}

MemoryRecord record(int64_t ts, int64_t addr, int64_t bytes, int64_t allocated, int64_t reserved) {
  MemoryRecord m;
  m.ts_ns = ts;
  m.tid = 7;
  m.addr = addr;
  m.bytes = bytes;
  m.total_allocated = allocated;
  m.total_reserved = reserved;
  m.device_type = 1;
  m.device_id = 0;
  return m;
}

}  // namespace

TEST(MemoryWrite, RecordsSurviveTheRoundTripAndMakeTheCurve) {
  Trace t;
  t.pid = 42;
  t.process_name = "06_train_mlp";
  const int64_t t0 = 1'700'000'000'000'000'000;
  t.events.push_back(range("ProfilerStep#2", Cat::UserAnnotation, t0, 10'000));
  t.events.push_back(range("aten::mm", Cat::CpuOp, t0 + 1'000, 2'000));
  t.memory.push_back(record(t0 + 1'500, 4096, 1024, 1024, 2048));  // made inside aten::mm
  t.memory.push_back(record(t0 + 5'000, 8192, 512, 1536, 2048));
  t.memory.push_back(record(t0 + 6'000, 4096, -1024, 512, 2048));  // the first block freed
  t.profile_memory = true;

  const Trace back = parse_trace(trace_to_json(t), "written");
  ASSERT_EQ(back.memory.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back.memory[i].ts_ns, t.memory[i].ts_ns);
    EXPECT_EQ(back.memory[i].addr, t.memory[i].addr);
    EXPECT_EQ(back.memory[i].bytes, t.memory[i].bytes);
    EXPECT_EQ(back.memory[i].total_allocated, t.memory[i].total_allocated);
    EXPECT_EQ(back.memory[i].total_reserved, t.memory[i].total_reserved);
    EXPECT_EQ(back.memory[i].device_type, 1);
    EXPECT_EQ(back.memory[i].device_id, 0);
    EXPECT_EQ(back.memory[i].tid, 7);
  }
  EXPECT_TRUE(back.profile_memory);

  const TraceIndex index(back);
  const MemoryReport r = memory_report(index);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].device, "cuda:0");
  EXPECT_EQ(r.windows[0].peak_allocated, 1536);
  EXPECT_EQ(r.windows[0].peak_reserved, 2048);
  EXPECT_EQ(r.windows[0].allocations, 2);
  EXPECT_EQ(r.windows[0].frees, 1);
  ASSERT_FALSE(r.windows[0].alive.empty());
  EXPECT_EQ(r.windows[0].alive[0].op, "aten::mm");  // the 1024-byte block, made inside aten::mm, alive at the peak
}

TEST(MemoryWrite, ATraceWithoutRecordsWritesNone) {
  Trace t;
  t.pid = 42;
  t.events.push_back(range("ProfilerStep#2", Cat::UserAnnotation, 1'000'000'000, 10'000));
  const std::string json = trace_to_json(t);
  EXPECT_EQ(json.find("[memory]"), std::string::npos);
  EXPECT_FALSE(parse_trace(json, "written").profile_memory);
}
