#include "profiler/comms.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ladder {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string int_list(const std::vector<int>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

}  // namespace

std::vector<std::pair<std::string, std::string>> record_param_comms_args(const CollectiveCall& call,
                                                                         const ProcessGroup& group) {
  const std::vector<int>& r = group.ranks;
  int start = r.empty() ? -1 : r[0], stride = r.size() > 1 ? r[1] - r[0] : 1;
  for (size_t i = 1; i < r.size(); ++i) {
    if (r[i] - r[i - 1] != stride) start = stride = -1;
  }
  return {
      {"Collective name", quoted(call.name)},
      {"In msg nelems", std::to_string(call.in_nelems)},
      {"Out msg nelems", std::to_string(call.out_nelems)},
      {"Group size", std::to_string(r.size())},
      {"dtype", quoted(call.dtype)},
      {"In split size", quoted("[]")},
      {"Out split size", quoted("[]")},
      {"Global rank start", std::to_string(start)},
      {"Global rank stride", std::to_string(stride)},
      {"Process Group Name", quoted(group.name)},
      {"Process Group Description", quoted(group.desc)},
      {"Process Group Ranks", quoted(int_list(r))},
      {"Rank", std::to_string(call.rank)},
  };
}

std::string distributed_info_json(int rank, int world_size, const ProcessGroup& group,
                                  const std::string& nccl_version) {
  return fmt::format(
      "{{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": {}, "
      "\"pg_desc\": {}, \"backend_config\": \"cuda:nccl\", \"pg_size\": {}, \"ranks\": {}}}], \"nccl_version\": {}}}",
      rank, world_size, quoted(group.name), quoted(group.desc), group.ranks.size(), int_list(group.ranks),
      quoted(nccl_version));
}

std::string rank_trace_file(int rank, int64_t stamp_ns) {
  return fmt::format("rank{}.{}.pt.trace.json", rank, stamp_ns);
}

}  // namespace ladder
