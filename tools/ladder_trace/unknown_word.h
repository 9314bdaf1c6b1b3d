// Words on the command line that ladder-trace does not know, named before CLI11 parses them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ladder::cli {

// "summary, timeline, ...": the app's subcommands, in the order --help lists them.
std::string subcommand_names(const CLI::App& app);

// Names an unknown subcommand or option before CLI11 does (it says "A subcommand is required" for `timline`, and
// takes `--row 5` for a file named 5), with the nearest known word where one is close enough to be a typo: "unknown
// subcommand timline, did you mean timeline? (subcommands: ...)". "" when every word is known.
std::string unknown_word(int argc, char** argv, CLI::App& app);

}  // namespace ladder::cli
