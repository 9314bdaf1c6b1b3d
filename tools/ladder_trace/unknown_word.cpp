// The nearest known word to a mistyped subcommand or option (Levenshtein distance), for ladder-trace's one-line errors.
#include "unknown_word.h"

#include <algorithm>
#include <vector>

namespace ladder::cli {
namespace {

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

}  // namespace

std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* s : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + s->get_name();
  return names;
}

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
        return "unknown subcommand " + a + did_you_mean(a, subs) + " (subcommands: " + subcommand_names(app) + ")";
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

}  // namespace ladder::cli
