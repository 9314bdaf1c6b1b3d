// ladder-trace: read a trace file (one of ours, or one torch.profiler wrote) and print what is in it.
//
//   ladder-trace summary FILE|FOLDER|-  the key_averages()-style table, then kernels and GPU busy time per step
//                                       (a folder: one table per rank, or as --csv/--json one table with a rank
//                                       column; gzip read as such; - is standard input)
//   ladder-trace timeline FILE|FOLDER   one step as CPU and GPU lanes on one time axis (a folder: every rank)
//   ladder-trace diff A B [--step 3]    what changed from A to B: kernels removed/added, times, bytes moved
//                                       (--name-width N: labels cut to N columns, no two rows alike)
//   ladder-trace svg FILE -o OUT.svg    one step (or a window, or one op's subtree: --focus) as a picture
//   ladder-trace svg FOLDER -o OUT.svg  one step of every rank: a lane group per rank, collectives joined, waits shaded
//   ladder-trace open FILE              the file in the Perfetto UI: prints its link, serves it once on 127.0.0.1:9001
//   ladder-trace kernels FILE|FOLDER|-  every kernel, copy and set: time, % of GPU time, GB/s and TFLOP/s vs a peak
//   ladder-trace breakdown FILE|FOLDER|- per step: where the wall time went, GPU idle time, stream concurrency
//   ladder-trace ranks FOLDER           per step and rank: step time, communication vs computation, who waits for whom
//   ladder-trace memory FILE            per step and device: peak allocated/reserved, what was alive at the peak, per op
//   ladder-trace svg --memory FILE -o OUT.svg   the allocated and reserved curves per device
//
// Example: ladder-trace diff traces/reference/h100/03_simple_mlp.json traces/reference/h100/03_fused_mlp.json
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>


#include "base/error.h"
#include "open_in_perfetto.h"
#include "trace/breakdown.h"
#include "trace/diff.h"
#include "trace/index.h"
#include "trace/json_read.h"
#include "trace/key_averages.h"
#include "trace/kernels_view.h"
#include "trace/memory_svg.h"
#include "trace/memory_view.h"
#include "trace/ranks.h"
#include "trace/ranks_lanes.h"
#include "trace/ranks_svg.h"
#include "trace/ranks_timeline.h"
#include "trace/ranks_view.h"
#include "trace/steps.h"
#include "trace/svg.h"
#include "trace/text.h"
#include "trace/timeline.h"
#include "trace/trace.h"
#include "work/ladder_ops.h"

using namespace ladder;

namespace {

// Reads a trace; what the reader skipped as unusable goes to stderr as one note, and a trace with no complete event
// at all is an error rather than an empty table.
uint64_t max_json = kDefaultMaxJsonBytes;

Trace load(const std::string& file) {
  Trace t = load_trace(file, max_json);
  if (!t.load_note.empty()) fmt::print(stderr, "note: {}\n", t.load_note);
  if (t.events.empty())
    throw TraceError("trace " + file + " has no events (no \"ph\": \"X\" event with an integer pid)");
  return t;
}

void check_trace(const Trace& t, const std::string& file) {
  if (!t.load_note.empty()) fmt::print(stderr, "note: {}\n", t.load_note);
  if (t.events.empty())
    throw TraceError("trace " + file + " has no events (no \"ph\": \"X\" event with an integer pid)");
}

// Levenshtein distance: how "timline" is near "timeline".
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown subcommand timline, did you mean timeline?": the closest of `known`, if it is close enough to be a typo.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& k : known) {
    const size_t d = distance(word, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best_d <= std::max<size_t>(2, word.size() / 3) ? ", did you mean " + best + "?" : "";
}

// Names an unknown subcommand or option before CLI11 does (it says "A subcommand is required" for `timline`, and
// takes `--row 5` for a file named 5). "" when every word is known.
std::string unknown_word(int argc, char** argv, CLI::App& app) {
  std::vector<std::string> subs;
  for (const CLI::App* s : app.get_subcommands({})) subs.push_back(s->get_name());
  CLI::App* sub = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h" || a == "--version") return "";
    if (!sub) {
      if (a.rfind("-", 0) == 0) continue;
      if (std::find(subs.begin(), subs.end(), a) == subs.end())
      {
        std::string all;
        for (const std::string& name : subs) all += (all.empty() ? "" : ", ") + name;
        return "unknown subcommand " + a + did_you_mean(a, subs) + " (subcommands: " + all + ")";
      }
      sub = app.get_subcommand(a);
      continue;
    }
    if (a.rfind("--", 0) != 0 || a == "--") continue;
    const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    std::vector<std::string> names;
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back(n);
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string near = did_you_mean(name, names);
      if (!near.empty()) near = ", did you mean --" + near.substr(15);
      return "unknown option --" + name + " for " + sub->get_name() + near;
    }
  }
  return "";
}

// The events of one step: host events that start in it, and the GPU work its launches put on the GPU. The whole trace
// when `k` is -1.
Trace one_step(const TraceIndex& index, int k) {
  Trace t = index.trace();
  if (k < 0) return t;
  const auto& s = index.steps()[static_cast<size_t>(k)];
  t.events.clear();
  const auto& all = index.trace().events;
  for (size_t i = 0; i < all.size(); ++i) {
    const Event& e = all[i];
    const bool in = is_gpu_activity(e.cat) ? index.step_of(static_cast<int>(i)) == k
                                           : e.ts_ns >= s.ts_ns && e.ts_ns <= s.end_ns;
    if (in) t.events.push_back(e);
  }
  t.memory.clear();
  for (const MemoryRecord& m : index.trace().memory) {
    if (m.ts_ns >= s.ts_ns && m.ts_ns <= s.end_ns) t.memory.push_back(m);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ladder-trace: tables, timelines, pictures, diffs and summary views of Kineto/PyTorch-format traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ladder-trace 1.0 (reads Kineto/PyTorch and Chrome JSON traces)");
  std::string file, file_b;
  int rows = 100, width = 0;

  std::string step_name;
  TableOptions table;
  bool csv = false, json = false;
  std::string max_json_text;
  auto max_json_option = [&](CLI::App* a) {
    a->add_option("--max-json", max_json_text,
                  "the most JSON one trace may hold, gzip inflated (bytes, or with K/M/G; default 8G)");
  };
  CLI::App* summary = app.add_subcommand("summary", "the summary table and the per-step statistics");
  summary->add_option("file", file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  summary->add_option("--rows", rows, "at most this many table rows")->check(CLI::Range(1, 1000000));
  summary->add_option("--step", step_name, "only ProfilerStep#N (3 = ProfilerStep#3)");
  summary->add_option("--sort", table.sort_by,
                      "torch's sort key: cpu_time_total, self_cpu_time_total, cuda_time_total (default), "
                      "self_cuda_time_total, cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage, "
                      "self_cuda_memory_usage, count, cpu_time, cuda_time");
  summary->add_option("--name-width", table.name_width, "cut names to this many characters (torch: 55)")
      ->check(CLI::Range(8, 10000));
  summary->add_flag("--group-by-input-shape", table.group_by_input_shape,
                    "one row per name and input shapes, with torch's Input Shapes column");
  summary->add_option("--filter", table.filter, "only rows whose name contains this regular expression (ECMAScript)");
  summary->add_flag("--csv", csv, "the table as CSV (times in us, memory in bytes; a folder: one, with a rank column)");
  summary->add_flag("--json", json, "the table as a JSON list of rows (a folder: one list, with a rank field)");
  bool steps_only = false;
  summary->add_flag("--steps", steps_only,
                    "only the per-step table (kernels, wall, GPU busy, CPU launch and sync), also as --csv/--json");
  max_json_option(summary);

  CLI::App* tl = app.add_subcommand("timeline", "one step drawn as CPU and GPU lanes");
  tl->add_option("file", file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks (all on "
                               "one axis)")->required();
  tl->add_option("--step", step_name, "ProfilerStep#N (3 = ProfilerStep#3; default: the last step)");
  max_json_option(tl);
  tl->add_option("--width", width, "characters across (default: the terminal's width)")->check(CLI::Range(40, 1000));

  CLI::App* diff = app.add_subcommand("diff", "what changed from trace A to trace B");
  diff->add_option("a", file, "trace A (before)")->required();
  diff->add_option("b", file_b, "trace B (after)")->required();
  max_json_option(diff);
  std::string diff_step;
  diff->add_option("--step", diff_step, "compare this step of both (3 = ProfilerStep#3; default: the mean over all steps)");
  diff->add_flag("--csv", csv, "the rows and the step figures as CSV (times in us per step, bytes)");
  diff->add_flag("--json", json, "the rows and the step figures as a JSON list");
  int diff_name_width = 60;
  diff->add_option("--name-width", diff_name_width, "cut row labels to this many characters (default 60)")
      ->check(CLI::Range(20, 10000));

  CLI::App* svg = app.add_subcommand("svg", "one step, a window or one op's subtree drawn as an SVG picture");
  SvgOptions svg_opt;
  std::string svg_out;
  double from_us = 0, to_us = 0;
  svg->add_option("file", file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks (every "
                                "rank in one picture)")->required();
  max_json_option(svg);
  svg->add_option("-o,--output", svg_out, "the SVG file to write")->required();
  CLI::Option* svg_step = svg->add_option("--step", svg_opt.step, "draw ProfilerStep#N (default: the last step)");
  CLI::Option* from = svg->add_option("--from", from_us, "window start, us from the trace's first event");
  CLI::Option* to = svg->add_option("--to", to_us, "window end, us from the trace's first event");
  from->excludes(svg_step);
  to->excludes(svg_step);
  svg->add_option("--focus", svg_opt.focus,
                  "only this op's subtree and its GPU work: NAME is the first in the step, NAME#K the K-th");
  svg->add_option("--width", svg_opt.width, "pixels across (default 1200)")->check(CLI::Range(400, 20000));
  bool svg_memory = false;
  svg->add_flag("--memory", svg_memory, "draw the allocated and reserved memory per device (a profile_memory trace)");

  CLI::App* op = app.add_subcommand("open", "the file in the Perfetto UI: prints the link, serves the file once on "
                                               "127.0.0.1:9001, opens a browser where there is one");
  op->add_option("file", file, "trace file")->required()->check(CLI::ExistingFile);
  bool no_browser = false;
  op->add_flag("--no-browser", no_browser, "print the link only; start no browser");

  CLI::App* kernels = app.add_subcommand("kernels", "every kernel, copy and set: time, GB/s and TFLOP/s against a peak");
  KernelViewOptions kernel_opt;
  double peak_tflops = 0, peak_gbps = 0;
  kernels->add_option("file", file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  kernels->add_option("--step", step_name, "only ProfilerStep#N (3 = ProfilerStep#3)");
  kernels->add_flag("--all", kernel_opt.all, "one row per kernel, copy and set, in time order");
  kernels->add_option("--peak-tflops", peak_tflops, "the TFLOP/s to show % of (default: the trace's GPU's datasheet)")
      ->check(CLI::PositiveNumber);
  kernels->add_option("--peak-gbps", peak_gbps, "the GB/s to show % of (default: the trace's GPU's datasheet)")
      ->check(CLI::PositiveNumber);
  kernels->add_option("--width", width, "characters across (default: the terminal's width)")->check(CLI::Range(40, 1000));
  kernels->add_flag("--csv", csv, "the table as CSV (times in us)");
  kernels->add_flag("--json", json, "the table as a JSON list of rows");
  max_json_option(kernels);

  CLI::App* breakdown = app.add_subcommand("breakdown", "per step: the step time breakdown, GPU idle time, concurrency");
  breakdown->add_option("file", file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks")
      ->required();
  breakdown->add_option("--step", step_name, "only ProfilerStep#N (3 = ProfilerStep#3)");
  breakdown->add_flag("--csv", csv, "the table as CSV (times in us)");
  breakdown->add_flag("--json", json, "the table as a JSON list of rows");
  max_json_option(breakdown);

  CLI::App* ranks_cmd = app.add_subcommand(
      "ranks", "a folder of ranks: step time per rank, communication vs computation, who waits for whom");
  ranks_cmd->add_option("folder", file, "a folder of traces, one per rank (a single file is one rank)")->required();
  ranks_cmd->add_option("--step", step_name, "only ProfilerStep#N (3 = ProfilerStep#3)");
  ranks_cmd->add_flag("--csv", csv, "one record per step and rank, as CSV (times in us)");
  ranks_cmd->add_flag("--json", json, "one record per step and rank, as a JSON list");
  max_json_option(ranks_cmd);

  CLI::App* memory = app.add_subcommand("memory", "per step and device: peak allocated and reserved, the blocks alive at "
                                                   "the peak and the op that made each, per-op allocation statistics");
  memory->add_option("file", file, "trace file recorded with profile_memory=True (.json or .json.gz), or -")->required();
  memory->add_option("--step", step_name, "only ProfilerStep#N (3 = ProfilerStep#3)");
  memory->add_option("--width", width, "characters across (default: the terminal's width)")->check(CLI::Range(40, 1000));
  memory->add_flag("--csv", csv, "the peaks, the blocks alive at each peak and the per-op rows as CSV (bytes, us)");
  memory->add_flag("--json", json, "the same as a JSON list of rows");
  max_json_option(memory);

  if (argc == 1) {  // no subcommand: say which there are, in one line
    std::string names;
    for (const CLI::App* s : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + s->get_name();
    fmt::print(stderr, "error: a subcommand is needed ({}); ladder-trace --help says what each does\n", names);
    return 2;
  }
  if (const std::string bad = unknown_word(argc, argv, app); !bad.empty()) {
    fmt::print(stderr, "error: {}\n", bad);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // `ladder-trace summary --bogus --help`: the help asked for wins over the error that came first.
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
        const CLI::App* sub = nullptr;
        for (const CLI::App* s : {summary, tl, diff, svg, op, kernels, breakdown, ranks_cmd, memory}) {
          if (std::find(argv + 1, argv + argc, s->get_name()) != argv + argc) sub = s;
        }
        fmt::print("{}", sub ? sub->help(argv[0]) : app.help());
        return 0;
      }
    }
    std::string msg = e.what();  // one line that names the option or the file
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    fmt::print(stderr, "error: {}\n", msg);
    return 2;
  }
  for (const std::string& f : {file, file_b}) {
    if (!f.empty() && f != "-" && !std::filesystem::exists(f)) {
      fmt::print(stderr, "error: file does not exist: {}\n", f);
      return 2;
    }
  }
  if (!max_json_text.empty()) {
    char* end = nullptr;
    const double v = std::strtod(max_json_text.c_str(), &end);
    const std::string unit = end ? end : "";
    const double scale = unit.empty() ? 1 : unit == "K" ? 1024.0 : unit == "M" ? 1048576.0 : unit == "G" ? 1073741824.0 : -1;
    // At most 2^62 bytes: a larger double (1e30G) has no uint64 value, and converting it would be undefined.
    if (!(v > 0) || scale < 0 || !(v * scale <= 4611686018427387904.0)) {
      fmt::print(stderr, "error: --max-json {}: a size in bytes, or with K, M or G (8G), up to 2^62 bytes\n",
                 printable(max_json_text));
      return 2;
    }
    max_json = static_cast<uint64_t>(v * scale);
  }
  try {
    if (*op) {  // serves the bytes as they are: no need to read the trace
      open_in_perfetto(file, !no_browser);
      return 0;
    }
    ladder::register_ladder_ops_work();  // the bytes and FLOPs of the ladder's own ops (common/work)
    table.row_limit = rows;
    table.format = csv ? OutputFormat::Csv : json ? OutputFormat::Json : OutputFormat::Text;
    if (*summary) {
      // A folder: every trace in it is one rank, read in parallel; one table per rank, each headed by its rank (as
      // CSV/JSON, one table with a rank column, which pandas or jq read at once).
      std::vector<RankTrace> ranks;
      if (file != "-" && std::filesystem::is_directory(file)) {
        ranks = load_ranks(file, max_json);
      } else {
        ranks.push_back(RankTrace{0, file, load_trace(file, max_json)});
      }
      const bool folder = ranks.size() > 1 || (file != "-" && std::filesystem::is_directory(file));
      std::vector<std::pair<int, std::string>> records;  // a folder as CSV/JSON: one table, with a rank column
      for (const RankTrace& r : ranks) {
        check_trace(r.trace, r.path);
        const TraceIndex whole(r.trace);
        // Without --step the whole trace is the part: no copy of its events and no second index (on a 1 GB trace
        // they were 1.3 GB more at the peak).
        const int k = find_step(whole, step_name, r.path);
        std::optional<Trace> part;
        std::optional<TraceIndex> part_index;
        if (k >= 0) part_index.emplace(part.emplace(one_step(whole, k)));
        const TraceIndex& index = k >= 0 ? *part_index : whole;
        if (table.format != OutputFormat::Text) {
          records.emplace_back(r.rank, steps_only ? regime_table(index, table.format) : summary_table(index, table));
          continue;
        }
        if (folder) fmt::print("{}== rank {}: {} ==\n", &r == &ranks.front() ? "" : "\n", r.rank, r.path);
        if (steps_only) {
          fmt::print("{}", regime_table(index));
        } else {
          if (!step_name.empty()) fmt::print("{} of {}\n", whole.steps()[find_step(whole, step_name, r.path)].name, r.path);
          fmt::print("{}\n{}", summary_table(index, table), regime_table(index));
        }
      }
      if (!records.empty()) fmt::print("{}", folder ? join_ranks(records, table.format) : records[0].second);
    } else if (*kernels || *breakdown) {
      // One section per rank for a folder, as summary prints it; as CSV/JSON, one table with a rank column.
      const bool folder = file != "-" && std::filesystem::is_directory(file);
      std::vector<RankTrace> ranks;
      if (folder) {
        ranks = load_ranks(file, max_json);
      } else {
        ranks.push_back(RankTrace{0, file, load_trace(file, max_json)});
      }
      std::vector<std::pair<int, std::string>> records;
      for (const RankTrace& r : ranks) {
        check_trace(r.trace, r.path);
        const TraceIndex index(r.trace);
        const int k = find_step(index, step_name, r.path);
        const bool one_table = folder && table.format != OutputFormat::Text;
        if (folder && !one_table) fmt::print("{}== rank {}: {} ==\n", &r == &ranks.front() ? "" : "\n", r.rank, r.path);
        kernel_opt.step = k;
        kernel_opt.format = table.format;
        kernel_opt.width = width ? width : terminal_width();
        kernel_opt.peak = r.trace.devices.empty() ? Peak{} : peak_of(r.trace.devices.front().name);
        if (peak_tflops > 0 || peak_gbps > 0) {
          kernel_opt.peak = Peak{peak_tflops, peak_gbps, "given", "--peak-tflops, --peak-gbps"};
        } else if (kernel_opt.peak.tflops > 0) {
          kernel_opt.peak.gpu += " (" + printable(r.trace.devices.front().name) + ", datasheet)";
        }
        const std::string view = *breakdown ? breakdown_view(index, k, table.format) : kernels_view(index, kernel_opt);
        if (one_table) {
          records.emplace_back(r.rank, view);
        } else {
          fmt::print("{}", view);
        }
      }
      if (!records.empty()) fmt::print("{}", join_ranks(records, table.format));
    } else if (*ranks_cmd) {
      fmt::print("{}", ranks_view(load_rank_figures(file, max_json), step_name, table.format));
    } else if (*tl && file != "-" && std::filesystem::is_directory(file)) {  // every rank on one axis
      fmt::print("{}", ranks_timeline(ranks_picture(file, step_name, max_json), width ? width : terminal_width()));
    } else if (*tl) {
      const Trace t = load(file);
      const TraceIndex index(t);
      fmt::print("{}", timeline(t, find_step(index, step_name, file), width ? width : terminal_width()));
    } else if (*diff) {
      // One trace in memory at a time.
      fmt::print("{}", diff_traces([&] { return load(file); }, [&] { return load(file_b); }, file, file_b, diff_step,
                                   table.format, diff_name_width));
    } else if (*memory) {
      const Trace t = load(file);
      const TraceIndex index(t);
      fmt::print("{}", memory_view(index, find_step(index, step_name, file), table.format,
                                   width ? width : terminal_width()));
    } else if (*svg) {
      const bool ranks_folder = file != "-" && std::filesystem::is_directory(file);  // every rank in one picture
      if (ranks_folder && (*from || *to || !svg_opt.focus.empty() || svg_memory))
        throw UsageError("svg FOLDER draws one step of every rank: --from, --to, --focus and --memory take one trace");
      const Trace t = ranks_folder ? Trace{} : load(file);
      if (*from) svg_opt.from_us = from_us;
      if (*to) svg_opt.to_us = to_us;
      svg_opt.title = std::filesystem::path(file).lexically_normal().filename().string();  // not the path: same bytes
      if (svg_opt.title.empty()) svg_opt.title = std::filesystem::path(file).parent_path().filename().string();
      const std::string picture = ranks_folder ? ranks_svg(ranks_picture(file, svg_opt.step, max_json), svg_opt.title,
                                                           svg_opt.width)
                                  : svg_memory ? memory_svg(TraceIndex(t), svg_opt)
                                               : trace_svg(TraceIndex(t), svg_opt);
      std::FILE* f = std::fopen(svg_out.c_str(), "wb");
      if (!f) throw UsageError("cannot write " + svg_out + ": " + std::strerror(errno));
      const bool ok = std::fwrite(picture.data(), 1, picture.size(), f) == picture.size();
      if (std::fclose(f) != 0 || !ok) throw UsageError("could not write all of " + svg_out);
    }
    // Done. A large trace is millions of events: handing their memory back one by one takes a second or two that
    // the process's exit does at once, so leave without running the destructors.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
  } catch (const UsageError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
