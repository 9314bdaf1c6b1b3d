// Real torch 2.11 traces recorded on an H100 by bench/record_torch_oracle.py (tests/data/torch211, unedited), each
// with torch's own key_averages().table(sort_by="cuda_time_total", row_limit=-1) of the same run: backward on an
// autograd thread, with_stack Python frames, memory events, two streams, CUDA graphs, and a trace without steps
// Our table must print every row torch prints with the same numbers; steps must hold the kernels launched
// in them on any thread; each stream and each thread must get its own timeline rows. Then the hostile-input fixes of
// the views: each test below failed (or crashed) before its fix.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "trace/analyses/work.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/model/trace.h"
#include "trace/renderers/diff.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/steps_table.h"
#include "trace/renderers/timeline.h"
#include "trace/text/text.h"

namespace ladder {
namespace {

std::string data(const std::string& name) { return std::string(LADDER_TEST_DATA) + "/torch211/" + name; }

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A printed table, parsed by its columns: the header's rule gives each column's width.
struct Table {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> footer;  // "Self CPU time total: ...", "Self CUDA time total: ..."
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(' ') - a + 1);
}

Table parse_table(const std::string& text) {
  Table t;
  const auto lines = lines_of(text);
  std::vector<size_t> rules;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("-----", 0) == 0) rules.push_back(i);
  }
  if (rules.size() < 3) return t;
  std::vector<size_t> widths;
  for (const std::string& cell : lines_of([&] {
         std::string r = lines[rules[0]];
         for (char& c : r) c = c == ' ' ? '\n' : c;
         return r;
       }())) {
    if (!cell.empty()) widths.push_back(cell.size());
  }
  auto cells = [&](const std::string& l) {
    std::vector<std::string> out;
    size_t pos = 0;
    for (size_t w : widths) {
      out.push_back(pos < l.size() ? trim(l.substr(pos, w)) : "");
      pos += w + 2;
    }
    return out;
  };
  // Header cells by runs of two spaces: torch's "CUDA time avg" is 13 characters in a 12-wide column and shifts the
  // header cells after it; the rows' cells fit their columns.
  for (std::string l = lines[rules[0] + 1]; !l.empty();) {
    const size_t a = l.find_first_not_of(' ');
    if (a == std::string::npos) break;
    const size_t b = l.find("  ", a);
    t.header.push_back(l.substr(a, b == std::string::npos ? std::string::npos : b - a));
    l = b == std::string::npos ? "" : l.substr(b);
  }
  for (size_t i = rules[1] + 1; i < rules[2]; ++i) {
    const auto c = cells(lines[i]);
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < c.size(); ++k) row[t.header[k]] = c[k];
    t.rows.push_back(row);
  }
  for (size_t i = rules[2] + 1; i < lines.size(); ++i) {
    if (lines[i].rfind("Self ", 0) == 0) t.footer.push_back(lines[i]);
  }
  return t;
}

// torch's table of one case from key_averages_tables.txt: the lines after "==== <case> ====" up to the next case.
std::string torch_table(const std::string& name) {
  const std::string all = read_file(data("key_averages_tables.txt"));
  const size_t a = all.find("==== " + name + " ====\n");
  if (a == std::string::npos) return "";
  const size_t b = all.find("\n==== ", a + 1);
  return all.substr(all.find('\n', a) + 1, b == std::string::npos ? std::string::npos : b - all.find('\n', a));
}

class TorchTables : public ::testing::TestWithParam<const char*> {};

// Our table against torch's, row by row, every column torch prints compared as text: times, shares, averages,
// memory ("CPU Mem" ... "Self CUDA Mem") and Input Shapes. Rows pair by name (and shapes); a name torch prints twice
// (ProfilerStep*: the CPU range and its span on the GPU lane) pairs in order.
void compare_with_torch(const std::string& theirs_text, const std::string& ours_text, const std::string& label) {
  SCOPED_TRACE(label + "\n" + ours_text);
  const Table ours = parse_table(ours_text), theirs = parse_table(theirs_text);
  ASSERT_FALSE(theirs.rows.empty());
  EXPECT_EQ(ours.header, theirs.header);
  auto key = [](const std::map<std::string, std::string>& r) {
    auto s = r.find("Input Shapes");
    return r.at("Name") + (s == r.end() ? "" : " " + s->second);
  };
  std::map<std::string, std::vector<const std::map<std::string, std::string>*>> by_key;
  for (const auto& r : ours.rows) by_key[key(r)].push_back(&r);
  std::map<std::string, size_t> used;
  int compared = 0, cells = 0;
  for (const auto& r : theirs.rows) {
    const std::string k = key(r);
    auto it = by_key.find(k);
    ASSERT_TRUE(it != by_key.end() && used[k] < it->second.size()) << "torch prints a row we do not: " << k;
    const auto& mine = *it->second[used[k]++];
    for (const std::string& c : theirs.header) {
      ASSERT_TRUE(mine.count(c)) << "a column only torch prints: " << c;
      ++cells;
      // The averages too: torch prints them from Python floats summed from times relative to its profiler's start
      // (Kineto's "PyTorch Profiler (0)" span), so one exactly half a nanosecond in decimal (170.685 us / 2) has the
      // last digit of that float (85.342us), and ours is read the same way.
      EXPECT_EQ(mine.at(c), r.at(c)) << k << ", " << c;
    }
    ++compared;
  }
  EXPECT_EQ(ours.rows.size(), theirs.rows.size()) << "rows only we print";
  EXPECT_EQ(ours.footer, theirs.footer);
  fmt::print("{}: {} rows ({} cells) equal to torch's table, footers {}\n", label, compared, cells,
             ours.footer == theirs.footer ? "equal" : "differ");
}

// Every row both print: same self/total CPU and CUDA times, averages, shares and calls, to the printed precision.
// An average exactly on a half (67405 ns / 2 = 33.7025 us) is torch's float quotient: (end - start) in double
// microseconds from its profiler's start, summed and divided, rounds up or down by that float noise, and so does ours.
TEST_P(TorchTables, EveryRowAgreesWithKeyAverages) {
  const std::string name = GetParam();
  const std::string theirs_text = torch_table(name);
  ASSERT_FALSE(theirs_text.empty()) << name;
  const Trace t = load_trace(data(name + ".json"));
  const std::string ours_text = summary_table(t, -1);
  SCOPED_TRACE(ours_text);
  compare_with_torch(theirs_text, ours_text, name);
}

// Kernels per step, counted from the file itself: a kernel belongs to the step during which its launch call started,
// on any thread of the process (backward launches from the autograd thread); no steps: one window, every kernel.
TEST_P(TorchTables, KernelsPerStepByLaunchTimeOnAnyThread) {
  const std::string name = GetParam();
  const auto doc = nlohmann::json::parse(read_file(data(name + ".json")));
  struct Span {
    std::string name;
    double ts, end;
  };
  std::vector<Span> steps;
  std::map<int64_t, double> launch_ts;
  std::map<int64_t, int64_t> launch_tid;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat == "user_annotation" && e.value("name", "").rfind("ProfilerStep#", 0) == 0) {
      steps.push_back({e["name"], e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    }
    if ((cat == "cuda_runtime" || cat == "cuda_driver") && e.contains("args") && e["args"].contains("correlation")) {
      launch_ts[e["args"]["correlation"].get<int64_t>()] = e["ts"].get<double>();
      launch_tid[e["args"]["correlation"].get<int64_t>()] = e["tid"].get<int64_t>();
    }
  }
  std::sort(steps.begin(), steps.end(), [](const Span& a, const Span& b) { return a.ts < b.ts; });
  std::map<std::string, int> expected;
  std::set<int64_t> launch_threads;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "kernel") continue;
    const int64_t corr = e["args"]["correlation"].get<int64_t>();
    if (steps.empty()) {
      expected["whole trace"]++;
      continue;
    }
    ASSERT_TRUE(launch_ts.count(corr)) << "a kernel without its launch call in " << name;
    for (const Span& s : steps) {
      if (s.ts <= launch_ts[corr] && launch_ts[corr] <= s.end) {
        expected[s.name]++;
        launch_threads.insert(launch_tid[corr]);
      }
    }
  }
  const Trace t = load_trace(data(name + ".json"));
  std::map<std::string, int> got;
  for (const StepStats& s : step_stats(t)) got[s.name] = s.kernels;
  EXPECT_EQ(got, expected);
  if (name == std::string("transformer_fwd_bwd")) {
    // Not vacuous: the forward's kernels are launched on the main thread, the backward's on autograd's.
    EXPECT_EQ(launch_threads.size(), 2u);
    for (const auto& [step, n] : got) EXPECT_GT(n, 50) << step;
  }
}

TEST_P(TorchTables, NoNegativeTimeAnywhere) {
  const Trace t = load_trace(data(std::string(GetParam()) + ".json"));
  const TraceIndex index(t);
  const std::string out = summary_table(index, -1) + regime_table(index);
  for (const std::string& l : lines_of(out)) {
    // A negative time; memory may be negative (a free: "-8 B", "-16.02 MB"), as in torch's own table.
    for (size_t p = l.find(" -"); p != std::string::npos; p = l.find(" -", p + 1)) {
      const size_t end = l.find(' ', p + 1);
      const std::string cell = l.substr(p + 1, end == std::string::npos ? std::string::npos : end - p - 1);
      const bool memory = (end != std::string::npos && l.compare(end, 3, " B ") == 0) ||
                          (end != std::string::npos && l.size() > end + 2 && l[end + 2] == 'B');
      EXPECT_FALSE(!memory && cell.size() > 1 && std::isdigit(static_cast<unsigned char>(cell[1]))) << l;
    }
  }
}

// The traces PyTorch users keep (tests/data/torch211_user, recorded by bench/record_torch_user_traces.py, the names
// torch wrote): gzip from tensorboard_trace_handler(use_gzip=True), profile_memory=True with its memory columns
// under three of torch's tables, a folder of two gloo ranks, two streams. Each table torch printed for them is ours.
std::string user(const std::string& path) { return std::string(LADDER_TEST_DATA) + "/torch211_user/" + path; }

// The table after "==== <title> ====" in a torch.txt, up to the next "====" or the end; the whole text without one.
std::string section(const std::string& text, const std::string& title) {
  if (title.empty()) return text;
  const size_t a = text.find("==== " + title + " ====\n");
  if (a == std::string::npos) return "";
  const size_t from = text.find('\n', a) + 1, b = text.find("\n==== ", from);
  return text.substr(from, b == std::string::npos ? std::string::npos : b - from);
}

std::string only_trace_in(const std::string& folder) {
  for (const auto& e : std::filesystem::directory_iterator(user(folder))) {
    if (e.path().extension() == ".gz") return e.path().string();
  }
  return "";
}

TEST(TorchUserTraces, MemoryTablesEqualTorchsUnderEachSortAndGrouping) {
  const Trace t = load_trace(only_trace_in("memory"));
  ASSERT_TRUE(t.profile_memory);
  ASSERT_GE(t.memory.size(), 100u);
  const TraceIndex index(t);
  const std::string torch = read_file(user("memory/torch.txt"));
  TableOptions o;
  o.row_limit = -1;
  compare_with_torch(section(torch, "key_averages().table(sort_by=\"cuda_time_total\", row_limit=-1)"),
                     summary_table(index, o), "memory, cuda_time_total");
  o.sort_by = "self_cuda_memory_usage";
  compare_with_torch(section(torch, "key_averages().table(sort_by=\"self_cuda_memory_usage\", row_limit=-1)"),
                     summary_table(index, o), "memory, self_cuda_memory_usage");
  o.sort_by = "cuda_time_total";
  o.group_by_input_shape = true;
  compare_with_torch(
      section(torch, "key_averages(group_by_input_shape=True).table(sort_by=\"cuda_time_total\", row_limit=-1)"),
      summary_table(index, o), "memory, group_by_input_shape");
}

TEST(TorchUserTraces, EachRankOfAFolderEqualsThatRanksTable) {
  const std::vector<RankTrace> ranks = load_ranks(user("ranks"));
  ASSERT_EQ(ranks.size(), 2u);
  for (const RankTrace& r : ranks) {
    const TraceIndex index(r.trace);
    compare_with_torch(read_file(user(fmt::format("ranks/rank{}.txt", r.rank))), summary_table(index, -1),
                       fmt::format("rank {}", r.rank));
  }
  EXPECT_EQ(ranks[0].rank, 0);
  EXPECT_EQ(ranks[1].rank, 1);
}

TEST(TorchUserTraces, TwoStreamsGzipEqualsTorch) {
  const Trace t = load_trace(only_trace_in("streams"));
  compare_with_torch(read_file(user("streams/torch.txt")), summary_table(TraceIndex(t), -1), "streams");
}

// A training step of a small convolutional MLP recorded with every profiler option, with_flops=True among them
// (bench/record_torch_user_traces.py, torch 2.11 on an H200): the trace says "with_flops": 1 and holds no per-op
// "flops"; torch's "Total KFLOPs" column (aten::mm, addmm, bmm, conv2d, mul, add) is computed from the ops' Input Dims
// and Concrete Inputs as torch computes it, under both of torch's tables. Before torch_flops.h: no FLOPs column.
TEST(TorchUserTraces, WithFlopsTraceEqualsTorchsTablesTotalFlopsIncluded) {
  const Trace t = load_trace(user("flops/flops.json"));
  ASSERT_EQ(t.metadata.at("with_flops"), "1");
  const TraceIndex index(t);
  const std::string torch = read_file(user("flops/torch.txt"));
  TableOptions o;
  o.row_limit = -1;
  const std::string ours = summary_table(index, o);
  EXPECT_NE(ours.find("Total KFLOPs"), std::string::npos) << ours;
  compare_with_torch(section(torch, "key_averages().table(sort_by=\"cuda_time_total\", row_limit=-1)"), ours,
                     "with_flops, cuda_time_total");
  o.group_by_input_shape = true;
  compare_with_torch(
      section(torch, "key_averages(group_by_input_shape=True).table(sort_by=\"cuda_time_total\", row_limit=-1)"),
      summary_table(index, o), "with_flops, group_by_input_shape");
}

// Torch's rows against ours, paired by name (and order, for a name torch prints twice): how many cells, and how many
// equal. `must_equal(name, column)` names the cells that fail the test when they differ.
std::pair<int, int> count_equal_cells(const Table& theirs, const Table& ours, const std::string& label,
                                      const std::function<bool(const std::string&, const std::string&)>& must_equal) {
  std::map<std::string, std::vector<const std::map<std::string, std::string>*>> mine;
  for (const auto& row : ours.rows) mine[row.at("Name")].push_back(&row);
  std::map<std::string, size_t> used;
  int cells = 0, equal = 0;
  for (const auto& row : theirs.rows) {
    const std::string& name = row.at("Name");
    if (used[name] >= mine[name].size()) {
      ADD_FAILURE() << label << ": torch prints a row we do not: " << name;
      continue;
    }
    const auto& m = *mine[name][used[name]++];
    for (const std::string& c : theirs.header) {
      ++cells;
      equal += m.at(c) == row.at(c);
      if (must_equal(name, c)) {
        EXPECT_EQ(m.at(c), row.at(c)) << label << ", " << name << ", " << c;
      }
    }
  }
  return {cells, equal};
}

// The real NCCL runs (tests/data/torch211_nccl, torch211_nccl4: DDP over 2 and 4 H100s), each rank's table against
// torch's rank<R>.txt. record_param_comms holds the collective's nccl:all_reduce range, which torch leaves out of its
// tree (an async event): its time is record_param_comms's own Self CPU. Before that rule ours was the Self CPU less
// the range's time (rank 1 of 2: 540.601us in torch's table, 126.934us in ours). Every cell of the row must equal
// torch's, on every rank. The counts of equal cells are printed for the record.
TEST(TorchNcclRanks, RecordParamCommsSelfCpuIsTorchs) {
  for (const std::string folder :
       {"torch211_nccl/ddp", "torch211_nccl4/ddp", "torch211_nccl/tp", "torch211_nccl4/tp"}) {
    for (const RankTrace& r : load_ranks(std::string(LADDER_TEST_DATA) + "/" + folder)) {
      const std::string label = fmt::format("{} rank {}", folder, r.rank);
      const Table theirs = parse_table(read_file(fmt::format("{}/{}/rank{}.txt", LADDER_TEST_DATA, folder, r.rank)));
      const Table ours = parse_table(summary_table(TraceIndex(r.trace), -1));
      ASSERT_EQ(ours.header, theirs.header) << label;
      const auto [cells, equal] =
          count_equal_cells(theirs, ours, label, [](const std::string& name, const std::string& c) {
            return name == "record_param_comms" && (c == "Self CPU" || c == "CPU total" || c == "# of Calls");
          });
      fmt::print("{}: {} of {} cells equal to torch's table\n", label, equal, cells);
    }
  }
}

// A long profiler overhead event ("Activity Buffer Request", 2.2 ms on rank 0 of the 2-GPU DDP run) that begins
// inside an aten::mm and ends after DistributedDataParallel.forward: torch files it with the profiled thread's ops,
// where it closes the ranges it only partly overlaps and takes the later ones as its children, and credits it with the
// kernels of the op it interrupted. Every cell of those rows but the two % columns (which hang on the Self CPU total)
// must be torch's. Before: DDP.forward's Self CPU 844.941us against torch's 961.392us, the overhead's 2.214ms against
// 1.894ms, its Self CUDA 0 against 17.216us.
TEST(TorchNcclRanks, ALongOverheadEventNestsAsTorchNestsIt) {
  const std::string folder = std::string(LADDER_TEST_DATA) + "/torch211_nccl/ddp";
  for (const RankTrace& r : load_ranks(folder)) {
    if (r.rank != 0) continue;
    const Table theirs = parse_table(read_file(folder + "/rank0.txt"));
    const Table ours = parse_table(summary_table(TraceIndex(r.trace), -1));
    for (const std::string name : {"Activity Buffer Request", "DistributedDataParallel.forward"}) {
      std::vector<const std::map<std::string, std::string>*> a, b;
      for (const auto& row : theirs.rows)
        if (row.at("Name") == name) a.push_back(&row);
      for (const auto& row : ours.rows)
        if (row.at("Name") == name) b.push_back(&row);
      ASSERT_EQ(a.size(), b.size()) << name;
      ASSERT_FALSE(a.empty()) << name;
      for (size_t k = 0; k < a.size(); ++k) {
        for (const std::string& c : theirs.header) {
          if (c == "Self CPU %" || c == "CPU total %") continue;
          EXPECT_EQ(b[k]->at(c), a[k]->at(c)) << name << ", " << c;
        }
      }
    }
  }
}

// A runtime call that no op launched (no External id: the autograd engine's cudaStreamWaitEvent and
// cudaEventRecordWithFlags between two backward ops, NCCL's watchdog polling cudaEventQuery) is filed by torch with the
// thread that collected the trace, the one that runs the steps: in the middle of a step, it is the step's child.
// Before, ProfilerStep*'s Self CPU was 7.359ms against torch's 7.336ms on rank 1 of 2 (6.267ms against 6.160ms on
// rank 0), and the Self CPU time total and every Self CPU % with it. Now every cell of every DDP rank's table (and of
// the async runs' ranks with a whole table) is torch's, the averages' last digit included: where the exact quotient is
// a tie (611.509us / 2 calls), torch's float sum from its profiler's start decides it (305.754us), and ours is that
// float (before, exactly rounded: 305.755us; 1042 and 1014 cells equal on 2 GPUs, 1009, 1006, 1030, 1010 on 4).
TEST(TorchNcclRanks, RuntimeCallsNoOpLaunchedAreTheStepsChildren) {
  for (const std::string folder :
       {"torch211_nccl/ddp", "torch211_nccl4/ddp", "torch211_nccl/async", "torch211_nccl4/async"}) {
    for (const RankTrace& r : load_ranks(std::string(LADDER_TEST_DATA) + "/" + folder)) {
      // async/rank0.txt is nearly empty: that rank's profiler cleared its events before the table (the data's README)
      if (folder.find("async") != std::string::npos && r.rank == 0) continue;
      const std::string label = fmt::format("{} rank {}", folder, r.rank);
      const std::string torch = read_file(fmt::format("{}/{}/rank{}.txt", LADDER_TEST_DATA, folder, r.rank));
      const std::string text = summary_table(TraceIndex(r.trace), -1);
      const Table theirs = parse_table(torch), ours = parse_table(text);
      const auto [cells, equal] =
          count_equal_cells(theirs, ours, label, [](const std::string&, const std::string&) { return true; });
      fmt::print("{}: {} of {} cells equal to torch's table, averages included\n", label, equal, cells);
      EXPECT_EQ(equal, cells) << label;
      EXPECT_GT(cells, 1000) << label;  // a whole table: 93 to 95 rows of 11 columns
      const auto total = [](const std::string& t) {
        const size_t at = t.find("Self CPU time total: ");
        return at == std::string::npos ? std::string() : t.substr(at, t.find('\n', at) - at);
      };
      EXPECT_FALSE(total(torch).empty()) << label;
      EXPECT_EQ(total(text), total(torch)) << label;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(H100, TorchTables,
                         ::testing::Values("transformer_fwd_bwd", "two_streams", "cudagraph_mlp", "no_schedule"));

TEST(TorchTimeline, OneBlockPerThreadAndOneRowPerStream) {
  // Forward on the main thread, backward on the autograd thread: two blocks, each headed by its thread's id and the
  // name the file gives it, the main thread first and said to be (before: "CPU forward" over the backward pass).
  const std::string tr = timeline(load_trace(data("transformer_fwd_bwd.json")), -1, 140);
  const size_t main = tr.find("\nCPU thread 420 (python3), the main thread\n");
  const size_t autograd = tr.find("\nCPU thread 446 (pt_autograd_0)\n");
  EXPECT_NE(main, std::string::npos) << tr;
  EXPECT_NE(autograd, std::string::npos) << tr;
  EXPECT_LT(main, autograd) << tr;
  EXPECT_EQ(tr.find("forward"), std::string::npos) << tr;
  // Two streams: two GPU rows, each with the GEMMs that ran on it.
  const std::string two = timeline(load_trace(data("two_streams.json")), -1, 100);
  int rows = 0;
  for (const std::string& l : lines_of(two)) {
    if (l.rfind("GPU s13 ", 0) == 0 || l.rfind("GPU s17 ", 0) == 0) {
      ++rows;
      EXPECT_EQ(l.size(), 100u) << l;
      EXPECT_NE(l.find_first_not_of(' ', 12), std::string::npos) << l;
    }
  }
  EXPECT_EQ(rows, 2) << two;
}

TEST(TorchTimeline, WholeTraceWindowWhenThereAreNoSteps) {
  const Trace t = load_trace(data("no_schedule.json"));
  const TraceIndex index(t);
  EXPECT_TRUE(index.whole_trace());
  EXPECT_NE(timeline(t, -1, 100).find("No ProfilerStep in this trace"), std::string::npos);
  EXPECT_NE(regime_table(index).find("no ProfilerStep in this trace"), std::string::npos);
  const std::string d = diff_traces(t, t, "x.json", "y.json");
  EXPECT_NE(d.find("x.json has no ProfilerStep: its whole trace is one window"), std::string::npos) << d;
  EXPECT_NE(d.find("kernels per step           10    ->        10"), std::string::npos) << d;
}

TEST(TorchDiff, StepByNameAndUnknownStepsListTheOnesThereAre) {
  const Trace t = load_trace(data("transformer_fwd_bwd.json"));
  const std::string d = diff_traces(t, t, "a", "b", "3");
  EXPECT_EQ(d.rfind("ProfilerStep#3 of a and of b\n", 0), 0u) << d;
  try {
    diff_traces(t, t, "a.json", "b.json", "9");
    ADD_FAILURE() << "no error for an unknown step";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "no step '9' in a.json: its steps are ProfilerStep#2, ProfilerStep#3");
  }
  const Trace none = load_trace(data("no_schedule.json"));
  EXPECT_THROW(diff_traces(t, none, "a", "b", "2"), TraceError);
}

Event kernel_on(int stream, const std::string& name, int64_t ts, int64_t dur, int64_t corr);

// Two GEMMs at once on streams 14 and 18: each keeps its own row (before: one GPU row, the second drawn over the
// first).
TEST(Timeline, ConcurrentStreamsGetARowEach) {
  Trace t;
  t.pid = 1;
  Event step;
  step.cat = Cat::UserAnnotation;
  step.name = "ProfilerStep#1";
  step.pid = t.pid = 1;
  step.ts_ns = 0;
  step.dur_ns = 10000;
  t.events.push_back(step);
  for (int k = 0; k < 2; ++k) {
    Event launch = step;
    launch.cat = Cat::CudaRuntime;
    launch.name = "cudaLaunchKernel";
    launch.ts_ns = 100 + 100 * k;
    launch.dur_ns = 50;
    launch.correlation = k;
    t.events.push_back(launch);
    t.events.push_back(kernel_on(k == 0 ? 14 : 18, k == 0 ? "gemm_a" : "gemm_b", 1000, 8000, k));
  }
  const std::string out = timeline(t, 0, 100);
  std::string s14, s18;
  for (const std::string& l : lines_of(out)) {
    if (l.rfind("GPU s14", 0) == 0) s14 = l;
    if (l.rfind("GPU s18", 0) == 0) s18 = l;
  }
  EXPECT_GT(std::count(s14.begin(), s14.end(), 'A'), 60) << out;
  EXPECT_GT(std::count(s18.begin(), s18.end(), 'B'), 60) << out;
}

// 70 kernel names: 62 letters, each for one name, then '?' for the rest, and the key says so (before: 'A' + n % 26).
TEST(Timeline, LettersAreNeverReused) {
  Trace t;
  Event step;
  step.cat = Cat::UserAnnotation;
  step.name = "ProfilerStep#1";
  step.pid = t.pid = 1;
  step.dur_ns = 100000;
  t.events.push_back(step);
  for (int k = 0; k < 70; ++k) t.events.push_back(kernel_on(7, "k" + std::to_string(k), 1000 + 1000 * k, 500, -1));
  const std::string out = timeline(t, 0, 200);
  std::map<char, std::set<std::string>> names_of;
  for (const std::string& l : lines_of(out)) {
    if (l.size() > 18 && l.rfind("  ", 0) == 0 && l.find(" total  k") != std::string::npos) {
      names_of[l[2]].insert(l.substr(l.find(" total  k") + 8));
    }
  }
  EXPECT_EQ(names_of.size(), 62u) << out;
  for (const auto& [c, names] : names_of) {
    EXPECT_NE(c, '?') << out;
    EXPECT_EQ(names.size(), 1u) << c;
  }
  EXPECT_NE(out.find("x8     4.0 us total  8 more kernel names: ? stands for every kernel name past the first 62"),
            std::string::npos)
      << out;
}

Event kernel_on(int stream, const std::string& name, int64_t ts, int64_t dur, int64_t corr) {
  Event k;
  k.cat = Cat::Kernel;
  k.name = name;
  k.pid = 0;
  k.tid = stream;
  k.gpu.stream = stream;
  k.ts_ns = ts;
  k.dur_ns = dur;
  k.correlation = corr;
  return k;
}

// ---- hostile input -----------------------------------------------------------------------------------------------

Event ev(Cat cat, const std::string& name, int64_t ts, int64_t dur, int64_t tid = 1) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = 1;
  e.tid = tid;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}

TEST(HostileViews, GemmWithZeroKIsUnknownNotSigfpe) {
  for (const char* op : {"aten::linear", "aten::matmul"}) {
    Event e = ev(Cat::CpuOp, op, 0, 10);
    using Dims = std::vector<std::vector<int64_t>>;
    e.set_inputs(std::string(op) == "aten::matmul" ? Dims{{4, 0}, {0, 8}} : Dims{{4, 0}, {8, 0}}, {"float", "float"});
    Work w;
    EXPECT_FALSE(op_work(e, &w)) << op;  // before: numel / k with k = 0, an integer division by zero (SIGFPE)
  }
}

TEST(HostileViews, HugeDimsDoNotOverflow) {
  Event e = ev(Cat::CpuOp, "aten::add", 0, 10);
  e.set_inputs({{int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 40, int64_t{1} << 40}}, {"float", "float"});
  Work w;
  ASSERT_TRUE(op_work(e, &w));
  EXPECT_GT(w.bytes, 1e25);  // 3 x 2^80 x 4 bytes; before: the int64 product wrapped (to 0)
  Event mm = ev(Cat::CpuOp, "aten::mm", 0, 10);
  mm.set_inputs({{int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 40, int64_t{1} << 40}}, {"float", "float"});
  ASSERT_TRUE(op_work(mm, &w));
  EXPECT_GT(w.bytes, 1e25);
  EXPECT_GT(w.flops, 1e36);
}

Trace one_step(std::vector<Event> more) {
  Trace t;
  t.pid = 1;
  t.events.push_back(ev(Cat::UserAnnotation, "ProfilerStep#1", 1000, 1000));
  for (Event& e : more) t.events.push_back(std::move(e));
  return t;
}

TEST(HostileViews, ZeroLengthEventAtTheStepsEndIsDrawnOnTheLastColumn) {
  const Trace t = one_step({ev(Cat::CpuOp, "aten::empty", 2000, 0)});
  const std::string out = timeline(t, 0, 60);
  bool seen = false;
  for (const std::string& l : lines_of(out)) {
    if (l.rfind("  ranges", 0) != 0) continue;
    seen = true;
    ASSERT_EQ(l.size(), 60u) << out;
    EXPECT_EQ(l.back(), '#') << out;  // before: written at row[row.size()], past the row, and lost
  }
  EXPECT_TRUE(seen) << out;
}

// 20,000 adds in one step: one legend line for their name, with how many ran and their total time (before: one line
// per kernel, 20,005 lines), and a CPU row of 20,000 launch calls that stays one row of '#'.
TEST(Timeline, LegendGroupsRepeats) {
  Trace t;
  t.pid = 1;
  t.events.push_back(ev(Cat::UserAnnotation, "ProfilerStep#1", 0, 41000000));
  for (int i = 0; i < 20000; ++i) {
    Event launch = ev(Cat::CudaRuntime, "cudaLaunchKernel", 1000 + int64_t{i} * 2000, 500);
    launch.correlation = i;
    t.events.push_back(launch);
    t.events.push_back(kernel_on(7, "add", 1600 + int64_t{i} * 2000, 930, i));
  }
  t.events.push_back(kernel_on(7, "gemm", 40100000, 5000, -1));
  const std::string out = timeline(t, 0, 100);
  EXPECT_NE(out.find("\n  A  x20000    18.6 ms total  add\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  B      x1     5.0 us total  gemm\n"), std::string::npos) << out;
  EXPECT_LT(lines_of(out).size(), 20u) << out;
  EXPECT_NE(out.find("\n  calls     ####"), std::string::npos) << out;
  EXPECT_NE(out.find("# is a range too narrow for any name"), std::string::npos) << out;
}

TEST(HostileViews, TimesFarOutsideTheAxisStayInTheRow) {
  Event launch = ev(Cat::CudaRuntime, "cudaLaunchKernel", 1100, 10);
  launch.correlation = 5;
  Event k = ev(Cat::Kernel, "k", int64_t{-4000000000000000000}, 10);
  k.pid = 0;
  k.tid = 7;
  k.correlation = 5;
  const std::string out = timeline(one_step({launch, k}), 0, 80);
  for (const std::string& l : lines_of(out)) {
    if (l.rfind("GPU", 0) == 0) {
      EXPECT_EQ(l.size(), 80u) << out;
    }
  }
}

TEST(HostileViews, ColumnsFromTheEnvironmentAreClamped) {
  const char* old = std::getenv("COLUMNS");
  const std::string saved = old ? old : "";
  setenv("COLUMNS", "2000000000", 1);
  EXPECT_EQ(terminal_width(), 1000);  // before: 2000000000, and a timeline row that size (21 GB)
  setenv("COLUMNS", "120", 1);
  EXPECT_EQ(terminal_width(), 120);
  if (old) {
    setenv("COLUMNS", saved.c_str(), 1);
  } else {
    unsetenv("COLUMNS");
  }
  EXPECT_LE(timeline(one_step({}), 0, 2000000000).size(), 20000u);
}

TEST(HostileViews, ControlBytesInNamesArePrintedEscaped) {
  const std::string evil = std::string("evil\x1b[2J\r\n") + '\0' + "x";
  Event op = ev(Cat::CpuOp, evil, 1100, 500);
  op.external_id = 9;
  Event launch = ev(Cat::CudaRuntime, "cudaLaunchKernel", 1200, 10);
  launch.correlation = 5;
  launch.external_id = 9;
  Event k = ev(Cat::Kernel, evil, 1300, 100);
  k.pid = 0;
  k.tid = 7;
  k.correlation = 5;
  k.external_id = 9;
  const Trace t = one_step({op, launch, k});
  const std::string out = summary_table(t, -1) + timeline(t, 0, 200) + diff_traces(t, t, evil, "b");
  for (char c : out) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 || c == '\n') << "a raw control byte " << int(u) << " in\n" << out;
    if (u < 0x20 && c != '\n') break;
  }
  EXPECT_NE(out.find("evil\\x1b[2J\\x0d\\x0a\\x00x"), std::string::npos) << out;
}

// Linear in the events whatever the number of steps: 32 times the steps take about 32 times as long (a view that
// scanned all events per step or per event would take 1,000 times as long).
TEST(HostileViews, ManyStepsStayLinear) {
  auto make = [](int steps) {
    Trace t;
    t.pid = 1;
    for (int s = 0; s < steps; ++s) {
      const int64_t t0 = 1000000 + int64_t{s} * 10000;
      t.events.push_back(ev(Cat::UserAnnotation, "ProfilerStep#" + std::to_string(s), t0, 9000));
      Event op = ev(Cat::CpuOp, "aten::mm", t0 + 100, 5000);
      op.external_id = s;
      Event launch = ev(Cat::CudaRuntime, "cudaLaunchKernel", t0 + 200, 100);
      launch.correlation = s;
      launch.external_id = s;
      Event k = ev(Cat::Kernel, "gemm", t0 + 400, 1000);
      k.pid = 0;
      k.tid = 7;
      k.correlation = s;
      k.external_id = s;
      for (Event* e : {&op, &launch, &k}) t.events.push_back(*e);
    }
    return t;
  };
  // The best of three runs: a timing is only ever slowed down by the machine, never sped up.
  auto seconds = [](const Trace& t) {
    double best = 1e9;
    for (int run = 0; run < 3; ++run) {
      const auto start = std::chrono::steady_clock::now();
      const TraceIndex index(t);
      const std::string out = summary_table(index) + regime_table(index) + diff_traces(t, t) + timeline(t, -1, 100);
      EXPECT_FALSE(out.empty());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  };
  // 32 times the steps: about 32 times the time when every view is linear (n log n: ~40x), 1,000 times when one is
  // quadratic. The bound sits between, as a ratio alone: an absolute slack would let a quadratic view pass whenever
  // the small case is fast. With ten times the steps and a bound of 45 this failed once on a loaded machine (the big
  // case no longer fits the caches: 31x on a 2-core machine under a load of 10); 320 leaves that three times over.
  const Trace small = make(1250), big = make(40000);
  const double a = seconds(small), b = seconds(big);
  EXPECT_LT(b, 320 * a) << a << " s for 1,250 steps, " << b << " s for 40,000";
}

}  // namespace
}  // namespace ladder
