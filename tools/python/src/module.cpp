// ladder_trace._core: the trace library's reader and views for Python. A Traces object holds one trace (or a
// folder's ranks) and its TraceIndex, built once; each view runs in C++ with the GIL released and comes back as the
// typed Table (trace/analyses/table.h) that `ladder-trace VIEW --csv` prints. The pandas frames are made in
// __init__.py.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "trace/analyses/advice.h"
#include "trace/analyses/critical_path.h"
#include "trace/analyses/hta_window.h"
#include "trace/analyses/idle_time.h"
#include "trace/analyses/kernel_sequences.h"
#include "trace/analyses/kernel_table.h"
#include "trace/analyses/key_averages_rows.h"
#include "trace/analyses/launch_stats.h"
#include "trace/analyses/memory_frames.h"
#include "trace/analyses/peaks.h"
#include "trace/analyses/ranks_figures.h"
#include "trace/analyses/step_frames.h"
#include "trace/model/index.h"
#include "trace/model/json_read.h"
#include "trace/model/ranks.h"
#include "trace/renderers/breakdown_view.h"
#include "trace/renderers/kernels_view.h"
#include "trace/renderers/key_averages.h"
#include "trace/renderers/output_table.h"
#include "trace/renderers/steps_table.h"
#include "trace/renderers/table_records.h"
#include "work/ladder_ops.h"

namespace nb = nanobind;
using namespace ladder;

namespace {

// A Table (trace/analyses/table.h) for Python: [(name, kind, values)], kind "int", "float" or "str", every cell as the
// analysis computed it (a float at full precision, NaN where it has no value). _frame in __init__.py makes the pandas
// DataFrame of it: every method whose analysis returns a Table comes back through here.
nb::list table_to_python(const Table& t) {
  if (!t.rectangular()) throw std::logic_error("table " + t.name + ": columns of different lengths");
  nb::list out;
  for (const TableColumn& c : t.columns) {
    nb::list values;
    if (c.type == TableColumn::Int) {
      for (int64_t v : c.ints) values.append(nb::int_(v));
    } else if (c.type == TableColumn::Float) {
      for (double v : c.floats) values.append(nb::float_(v));
    } else {
      for (const std::string& v : c.texts) values.append(nb::str(v.data(), v.size()));
    }
    const char* kind = c.type == TableColumn::Int ? "int" : c.type == TableColumn::Float ? "float" : "str";
    out.append(nb::make_tuple(c.name, kind, values));
  }
  return out;
}

// One rank's trace and its index (the index keeps a reference to the trace: both live here, never moved).
struct Rank {
  int rank = 0;
  std::string path;
  Trace trace;
  std::unique_ptr<TraceIndex> index;
};

// The command's checks (tools/ladder_trace/command.cpp, check_trace): events, and some of them torch.profiler's.
void check_events(const Rank& r) {
  if (r.trace.events.empty())
    throw TraceError("trace " + r.path + " has no events (no \"ph\": \"X\" event with an integer pid)");
  for (const Event& e : r.trace.events) {
    if (e.cat != Cat::Other) return;
  }
  throw TraceError("trace " + r.path + " holds no PyTorch profiler event: none of its " +
                   std::to_string(r.trace.events.size()) +
                   " events is a cpu_op, user_annotation, cuda_runtime, kernel, gpu_memcpy or other category torch "
                   "writes");
}

class Traces {
 public:
  Traces() = default;
  Traces(const Traces&) = delete;  // (std::vector<std::unique_ptr> would claim it can be copied)
  Traces(Traces&&) = default;
  Traces& operator=(Traces&&) = default;

  // A file (.json or .json.gz, told by its bytes), "-" for standard input, or a folder whose traces are ranks.
  static Traces load(const std::string& path, uint64_t max_json) {
    Traces t;
    {
      nb::gil_scoped_release release;
      t.folder_ = path != "-" && std::filesystem::is_directory(path);
      if (t.folder_) {
        for (RankTrace& r : load_ranks(path, max_json)) t.add(r.rank, r.path, std::move(r.trace));
      } else {
        Trace one = load_trace(path, max_json);
        const int r = rank_of(one, path);
        t.add(r < 0 ? 0 : r, path, std::move(one));
      }
    }
    return t;
  }
  // JSON text in memory (not gzip): `name` stands for the file in messages.
  static Traces parse(const nb::bytes& text, const std::string& name) {
    const std::string_view view(text.c_str(), text.size());
    Traces t;
    nb::gil_scoped_release release;
    Trace one = parse_trace(view, name);
    const int r = rank_of(one, name);
    t.add(r < 0 ? 0 : r, name, std::move(one));
    return t;
  }

  bool folder() const { return folder_; }
  std::vector<int> ranks() const {
    std::vector<int> out;
    for (const auto& r : ranks_) out.push_back(r->rank);
    return out;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& r : ranks_) out.push_back(r->path);
    return out;
  }
  std::vector<std::string> notes() const {
    std::vector<std::string> out;
    for (const auto& r : ranks_) {
      if (!r->trace.load_note.empty()) out.push_back(r->trace.load_note);
    }
    return out;
  }
  std::vector<std::string> step_names() const {
    std::vector<std::string> out;
    for (const auto& s : ranks_.front()->index->steps()) out.push_back(s.name);
    return out;
  }

  // summary --csv [--step S]: a step's table is that of its events alone (step_trace), as the command makes it.
  nb::list summary(const std::string& step, const std::string& sort, int rows, bool group_by_input_shape,
                   const std::string& filter) const {
    TableOptions opt;
    opt.sort_by = sort;
    opt.row_limit = rows;
    opt.group_by_input_shape = group_by_input_shape;
    opt.filter = filter;
    if (rows == 0 || rows < -1) throw UsageError("rows must be None or a positive count of rows");
    return per_rank_table([&](const Rank& r) {
      const int k = find_step(*r.index, step, r.path);
      if (k < 0) return key_averages_frame(key_averages(*r.index, opt), group_by_input_shape);
      const Trace part = step_trace(*r.index, k);
      return key_averages_frame(key_averages(TraceIndex(part), opt), group_by_input_shape);
    });
  }
  // summary --steps --csv.
  nb::list steps() const {
    return per_rank_table([](const Rank& r) { return steps_frame(*r.index); });
  }
  // kernels --csv [--step S] [--all] [--peak-tflops T --peak-gbps G]: the peak as the command picks it.
  nb::list kernels(const std::string& step, bool all, double peak_tflops, double peak_gbps) const {
    // The command's checks (--peak-tflops, --peak-gbps: positive, finite), in its words; 0 stands for "not given".
    for (const auto& [name, v] : {std::pair{"peak_tflops", peak_tflops}, std::pair{"peak_gbps", peak_gbps}}) {
      if (!(v >= 0) || std::isinf(v)) throw UsageError(fmt::format("{}: must be a positive number, got {}", name, v));
    }
    return per_rank_table([&](const Rank& r) {
      Peak peak = r.trace.devices.empty() ? Peak{} : peak_of(r.trace.devices.front().name);
      if (peak_tflops > 0 || peak_gbps > 0) peak = Peak{peak_tflops, peak_gbps, "given", "peak_tflops, peak_gbps"};
      return kernel_frame(kernel_table(*r.index, find_step(*r.index, step, r.path), all), peak);
    });
  }
  // breakdown --csv [--step S].
  nb::list breakdown(const std::string& step) const {
    return per_rank_table([&](const Rank& r) { return breakdown_frame(*r.index, find_step(*r.index, step, r.path)); });
  }
  // memory --csv [--step S] (which -1): the three kinds of rows in one table; or one typed table per kind (which: 0
  // the peaks, 1 the blocks alive at them, 2 the per-op statistics); with the view's refusal of a trace without
  // [memory] records.
  nb::list memory_frame(const std::string& step, int which) const {
    return per_rank_table([&](const Rank& r) {
      if (r.trace.memory.empty()) {
        throw TraceError("the trace holds no [memory] record: record it with torch.profiler.profile(profile_memory=True)");
      }
      const MemoryReport rep = memory_report(*r.index, find_step(*r.index, step, r.path));
      return which < 0    ? ladder::memory_frame(*r.index, rep)
             : which == 0 ? memory_steps_frame(*r.index, rep)
             : which == 1 ? memory_blocks_frame(*r.index, rep)
                          : memory_ops_frame(*r.index, rep);
    });
  }
  // HolisticTraceAnalysis's get_temporal_breakdown per rank, over the activities HTA keeps
  // (trace/analyses/hta_window.h), in nanoseconds: [(rank, span, idle, compute, non_compute)].
  std::vector<std::tuple<int, int64_t, int64_t, int64_t, int64_t>> hta_temporal() const {
    std::vector<std::tuple<int, int64_t, int64_t, int64_t, int64_t>> out;
    nb::gil_scoped_release release;
    for (const auto& r : ranks_) {
      const HtaTemporal h = hta_temporal_breakdown(hta_kept_activities(r->trace));
      out.emplace_back(r->rank, h.span_ns, h.idle_ns, h.compute_ns, h.non_compute_ns);
    }
    return out;
  }
  // advise --csv [--step S]: the findings (a folder: every rank's and the ranks'), as the command prints them.
  nb::list advise(const std::string& step) const {
    Table t;
    {
      nb::gil_scoped_release release;
      std::vector<RankIndex> all;
      for (const auto& r : ranks_) all.push_back(RankIndex{r->rank, r->path, r->index.get()});
      t = advice_table(advise_all(all, folder_, step));
    }
    return table_to_python(t);
  }
  // traceinsight's analyses (trace/analyses/idle_time.h, launch_stats.h, kernel_sequences.h) and our critical path
  // (critical_path.h), each rank's table under the last's, with a "rank" column last for a folder.
  nb::list idle_time(int64_t kernel_wait_ns) const {
    return per_rank_table([&](const Rank& r) {
      return idle_time_table(ladder::idle_time(*r.index, kernel_wait_ns), *r.index);
    });
  }
  nb::list launch_stats() const {
    return per_rank_table([&](const Rank& r) {
      return launch_stats_table(ladder::launch_stats(*r.index), *r.index);
    });
  }
  nb::list kernel_sequences(const std::string& operator_name, int min_pattern_len) const {
    if (operator_name.empty()) throw UsageError("operator_name must name an op (a part of its name: \"aten::linear\")");
    return per_rank_table([&](const Rank& r) {
      return kernel_sequences_table(ladder::kernel_sequences(*r.index, operator_name, min_pattern_len));
    });
  }
  nb::list critical_path(const std::string& step) const {
    return per_rank_table([&](const Rank& r) {
      return critical_path_table(ladder::critical_path(*r.index, find_step(*r.index, step, r.path)), *r.index);
    });
  }
  // ranks --csv [--step S]: its own rank column (a single trace is one rank), last.
  nb::list rank_table(const std::string& step) const {
    Table t;
    {
      nb::gil_scoped_release release;
      std::vector<RankFigures> figures;
      for (const auto& r : ranks_) figures.push_back(rank_figures(r->trace, r->rank, r->path));
      t = ranks_frame(figures, ranks_table(figures, step));
    }
    return table_to_python(t);
  }

 private:
  void add(int rank, std::string path, Trace trace) {
    auto r = std::make_unique<Rank>();
    r->rank = rank;
    r->path = std::move(path);
    r->trace = std::move(trace);
    check_events(*r);
    r->index = std::make_unique<TraceIndex>(r->trace);
    ranks_.push_back(std::move(r));
  }

  // An analysis's Table for every rank, computed with the GIL released: a folder's joined into one with a "rank"
  // column last (join_rank_tables), a single trace's as it is.
  nb::list per_rank_table(const std::function<Table(const Rank&)>& analysis) const {
    Table all;
    {
      nb::gil_scoped_release release;
      std::vector<std::pair<int, Table>> tables;
      for (const auto& r : ranks_) tables.emplace_back(r->rank, analysis(*r));
      all = folder_ ? join_rank_tables(tables) : std::move(tables.front().second);
    }
    return table_to_python(all);
  }

  bool folder_ = false;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ladder-trace's C++ reader and views (use ladder_trace.load)";
  // The bytes and FLOPs of the ladder's own ops (common/work), as the command registers them.
  register_ladder_ops_work();

  // The ladder's errors, one line each, as ValueError: a bad trace (TraceError) or a bad argument (UsageError). The
  // last registered translator is tried first, so the base class goes first.
  static nb::exception<Error> error(m, "Error", PyExc_ValueError);
  static nb::exception<UsageError> usage_error(m, "UsageError", error);
  static nb::exception<TraceError> trace_error(m, "TraceError", error);
  m.attr("DEFAULT_MAX_JSON") = kDefaultMaxJsonBytes;

  nb::class_<Traces>(m, "Traces")
      .def_static("load", &Traces::load, nb::arg("path"), nb::arg("max_json"))
      .def_static("parse", &Traces::parse, nb::arg("text"), nb::arg("name"))
      .def_prop_ro("folder", &Traces::folder)
      .def_prop_ro("ranks", &Traces::ranks)
      .def_prop_ro("paths", &Traces::paths)
      .def_prop_ro("notes", &Traces::notes)
      .def_prop_ro("step_names", &Traces::step_names)
      .def("summary", &Traces::summary, nb::arg("step"), nb::arg("sort"), nb::arg("rows"),
           nb::arg("group_by_input_shape"), nb::arg("filter"))
      .def("steps", &Traces::steps)
      .def("kernels", &Traces::kernels, nb::arg("step"), nb::arg("all"), nb::arg("peak_tflops"), nb::arg("peak_gbps"))
      .def("breakdown", &Traces::breakdown, nb::arg("step"))
      .def("memory_frame", &Traces::memory_frame, nb::arg("step"), nb::arg("which"))
      .def("rank_table", &Traces::rank_table, nb::arg("step"))
      .def("hta_temporal", &Traces::hta_temporal)
      .def("advise", &Traces::advise, nb::arg("step"))
      .def("idle_time", &Traces::idle_time, nb::arg("kernel_wait_ns"))
      .def("launch_stats", &Traces::launch_stats)
      .def("kernel_sequences", &Traces::kernel_sequences, nb::arg("operator_name"), nb::arg("min_pattern_len"))
      .def("critical_path", &Traces::critical_path, nb::arg("step"));
}
