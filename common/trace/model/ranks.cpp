// See ranks.h.
#include "trace/model/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <map>
#include <thread>

#include "base/error.h"
#include "trace/model/json_read.h"

namespace ladder {

namespace {

// The integer after `"rank":` in a JSON text (distributedInfo's value), or -1.
int rank_in_json(const std::string& text) {
  const size_t k = text.find("\"rank\"");
  if (k == std::string::npos) return -1;
  size_t p = text.find_first_not_of(" \t\n\r:", k + 6);
  if (p == std::string::npos || !std::isdigit(static_cast<unsigned char>(text[p]))) return -1;
  long v = 0;
  for (; p < text.size() && std::isdigit(static_cast<unsigned char>(text[p])) && v < 1000000000; ++p)
    v = v * 10 + (text[p] - '0');
  return v < 1000000000 ? static_cast<int>(v) : -1;
}

bool is_trace_name(const std::string& name) {
  auto ends = [&](const char* s) {
    const std::string e = s;
    return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".json") || ends(".gz");
}

}  // namespace

int rank_of(const Trace& trace, const std::string& path) {
  auto it = trace.metadata.find("distributedInfo");
  if (it != trace.metadata.end()) {
    const int r = rank_in_json(it->second);
    if (r >= 0) return r;
  }
  const std::string name = std::filesystem::path(path).filename().string();
  for (size_t k = name.find("rank"); k != std::string::npos; k = name.find("rank", k + 1)) {
    size_t p = k + 4;
    if (p < name.size() && (name[p] == '-' || name[p] == '_')) ++p;
    if (p < name.size() && std::isdigit(static_cast<unsigned char>(name[p]))) return rank_in_json("\"rank\":" + name.substr(p, 9));
  }
  return -1;
}

std::vector<RankTrace> load_ranks(const std::string& folder, uint64_t max_json_bytes, int threads) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.is_regular_file(ec) && is_trace_name(entry.path().filename().string())) files.push_back(entry.path().string());
  }
  if (ec) throw TraceError("cannot read folder " + folder + ": " + ec.message());
  if (files.empty()) throw TraceError("folder " + folder + " holds no trace (no *.json or *.json.gz file)");
  std::sort(files.begin(), files.end());

  // One file per task, taken in turn by at most `threads` threads: each reads its own file, nothing is shared but
  // the counter and the slots.
  std::vector<RankTrace> out(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) {
      try {
        out[i].path = files[i];
        out[i].trace = load_trace(files[i], max_json_bytes);
        out[i].rank = rank_of(out[i].trace, files[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t n = std::min<size_t>(files.size(), threads > 0 ? static_cast<unsigned>(threads) : cores);
  std::vector<std::thread> pool;
  for (size_t k = 1; k < n; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }

  std::vector<std::string> unknown;
  std::map<int, std::string> claimed;
  for (const RankTrace& r : out) {
    if (r.rank < 0) {
      unknown.push_back(r.path);
      continue;
    }
    auto [it, fresh] = claimed.emplace(r.rank, r.path);
    if (!fresh) throw TraceError(fmt::format("rank {} is claimed by two files: {} and {}", r.rank, it->second, r.path));
  }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& f : unknown) list += (list.empty() ? "" : ", ") + f;
    throw TraceError(fmt::format("no rank for {} in folder {}: neither a \"rank\" in distributedInfo nor rank<N> in the "
                                 "file name",
                                 list, folder));
  }
  std::sort(out.begin(), out.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  return out;
}

std::vector<RankTrace> load_ranks_or_file(const std::string& path, uint64_t max_json_bytes, int threads) {
  if (path != "-" && std::filesystem::is_directory(path)) return load_ranks(path, max_json_bytes, threads);
  std::vector<RankTrace> one;
  Trace t = load_trace(path, max_json_bytes);
  const int r = rank_of(t, path);
  one.push_back(RankTrace{r < 0 ? 0 : r, path, std::move(t)});
  return one;
}

}  // namespace ladder
