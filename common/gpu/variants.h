// Named kernel variants: a variant is a name, one line about it, and a launcher, kept in one list per kernel. The
// chapter picks one with --kernel NAME, and the tests and the benchmark loop over the whole list, so a variant a reader
// adds to the list is checked and timed with no other change.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace ladder {

template <class Launch>
struct Variant {
  const char* name;
  const char* what;
  Launch launch;
};

// The variant called `name`, or a UsageError listing the valid names.
template <class Launch>
const Variant<Launch>& find_variant(const std::vector<Variant<Launch>>& list, const std::string& name,
                                    const char* kernel) {
  std::string names;
  for (const auto& v : list) {
    if (name == v.name) return v;
    names += std::string(names.empty() ? "" : ", ") + v.name;
  }
  throw UsageError(std::string("--kernel: no ") + kernel + " variant named '" + name + "' (have: " + names + ")");
}

// "plain, vec, vec_x2": the names, for an option's --help.
template <class Launch>
std::string variant_names(const std::vector<Variant<Launch>>& list) {
  std::string names;
  for (const auto& v : list) names += std::string(names.empty() ? "" : ", ") + v.name;
  return names;
}

}  // namespace ladder
