// ladder-trace open FILE: the file in the Perfetto UI: prints its link, serves it once on 127.0.0.1:9001.
#include <memory>

#include "command.h"
#include "open_in_perfetto.h"

namespace ladder::cli {
namespace {

struct OpenArgs {
  std::string file;
  bool no_browser = false;
};

}  // namespace

Command add_open(CLI::App& app, Shared& shared) {
  auto a = std::make_shared<OpenArgs>();
  CLI::App* sub = app.add_subcommand("open", "the file in the Perfetto UI: prints the link, serves the file once on "
                                             "127.0.0.1:9001, opens a browser where there is one");
  sub->add_option("file", a->file, "trace file")->required()->check(CLI::ExistingFile);
  sub->add_flag("--no-browser", a->no_browser, "print the link only; start no browser");
  add_max_json(sub, shared);
  // Serves the bytes as they are, once the trace reads as every view reads it: an empty, truncated or foreign file is
  // the line summary prints, not a file Perfetto fails on.
  return {sub, {&a->file}, [a, &shared] {
            open_in_perfetto(a->file, !a->no_browser, kPerfettoPort, [&] { load(a->file, shared.max_json); });
          }};
}

}  // namespace ladder::cli
