// ladder-trace svg FILE -o OUT.svg: one step (or a window, or one op's subtree: --focus) as a picture;
// svg FOLDER -o OUT.svg: one step of every rank, a lane group per rank, collectives joined, waits shaded;
// svg --memory FILE -o OUT.svg: the allocated and reserved curves per device. -o -: the picture on standard output.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/error.h"
#include "command.h"
#include "trace/analyses/ranks_lanes.h"
#include "trace/model/index.h"
#include "trace/renderers/memory_svg.h"
#include "trace/renderers/ranks_svg.h"
#include "trace/renderers/svg.h"

namespace ladder::cli {
namespace {

struct SvgArgs {
  std::string file, out;
  SvgOptions svg;
  double from_us = 0, to_us = 0;
  CLI::Option* from = nullptr;
  CLI::Option* to = nullptr;
  bool memory = false;
};

// `path`, or standard output for "-".
void write_file(const std::string& path, const std::string& bytes) {
  const bool out = path == "-";
  std::FILE* f = out ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if ((out ? std::fflush(f) : std::fclose(f)) != 0 || !ok)
    throw UsageError("could not write all of " + (out ? std::string("standard output") : path));
}

void run_svg(SvgArgs& a, uint64_t max_json) {
  const bool ranks_folder = is_folder(a.file);  // every rank in one picture
  if (ranks_folder && (*a.from || *a.to || !a.svg.focus.empty() || a.memory))
    throw UsageError("svg FOLDER draws one step of every rank: --from, --to, --focus and --memory take one trace");
  const Trace t = ranks_folder ? Trace{} : load(a.file, max_json);
  if (*a.from) a.svg.from_us = a.from_us;
  if (*a.to) a.svg.to_us = a.to_us;
  a.svg.title = std::filesystem::path(a.file).lexically_normal().filename().string();  // not the path: same bytes
  if (a.svg.title.empty()) a.svg.title = std::filesystem::path(a.file).parent_path().filename().string();
  const std::string picture = ranks_folder ? ranks_svg(ranks_picture(a.file, a.svg.step, max_json), a.svg.title,
                                                       a.svg.width)
                              : a.memory   ? memory_svg(TraceIndex(t), a.svg)
                                           : trace_svg(TraceIndex(t), a.svg);
  write_file(a.out, picture);
}

}  // namespace

Command add_svg(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<SvgArgs>();
  CLI::App* sub = app.add_subcommand("svg", "one step, a window or one op's subtree drawn as an SVG picture");
  sub->add_option("file", a->file, "trace file (.json or .json.gz), - for standard input, or a folder of ranks (every "
                                   "rank in one picture)")->required();
  add_max_json(sub, shared);
  sub->add_option("-o,--output", a->out, "the SVG file to write, - for standard output")->required();
  CLI::Option* step = add_step(sub, a->svg.step, "draw ProfilerStep#N (default: the last step)");
  a->from = sub->add_option("--from", a->from_us, "window start, us from the trace's first event");
  a->to = sub->add_option("--to", a->to_us, "window end, us from the trace's first event");
  a->from->excludes(step);
  a->to->excludes(step);
  sub->add_option("--focus", a->svg.focus,
                  "only this op's subtree and its GPU work: NAME is the first in the step, NAME#K the K-th");
  sub->add_option("--width", a->svg.width, "pixels across (default 1200)")->check(CLI::Range(400, 20000));
  sub->add_flag("--memory", a->memory, "draw the allocated and reserved memory per device (a profile_memory trace)");
  return {sub, {&a->file}, [a, &shared] { run_svg(*a, shared.max_json); }};
}

}  // namespace ladder::cli
