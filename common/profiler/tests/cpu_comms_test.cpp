// A rank's collective as a PyTorch trace holds it (profiler/comms.h): record_param_comms' args, their copy on the
// NCCL kernel (the builder), "distributedInfo", and the file name, checked on the JSON our writer makes. No GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "profiler/builder.h"
#include "profiler/comms.h"
#include "trace/model/json_write.h"

namespace ladder {
namespace {

constexpr int64_t kPid = 200, kMain = 200;

Event host_range(const std::string& name, Cat cat, int64_t start, int64_t end, int64_t id) {
  Event e;
  e.cat = cat;
  e.name = name;
  e.pid = kPid;
  e.tid = kMain;
  e.ts_ns = start;
  e.dur_ns = end - start;
  e.external_id = id;
  return e;
}

std::string arg(const std::vector<std::pair<std::string, std::string>>& args, const std::string& key) {
  for (const auto& [k, v] : args) {
    if (k == key) return v;
  }
  return "(absent)";
}

TEST(Comms, RecordParamCommsArgsAreTorchs) {
  const ProcessGroup group{"0", "default_pg", {0, 1}};
  const auto args = record_param_comms_args({"allreduce", 6291456, 6291456, "BFloat16", 1}, group);
  EXPECT_EQ(args.front().first, "Collective name");
  EXPECT_EQ(arg(args, "Collective name"), "\"allreduce\"");
  EXPECT_EQ(arg(args, "In msg nelems"), "6291456");
  EXPECT_EQ(arg(args, "Out msg nelems"), "6291456");
  EXPECT_EQ(arg(args, "Group size"), "2");
  EXPECT_EQ(arg(args, "dtype"), "\"BFloat16\"");
  EXPECT_EQ(arg(args, "Process Group Name"), "\"0\"");
  EXPECT_EQ(arg(args, "Process Group Description"), "\"default_pg\"");
  EXPECT_EQ(arg(args, "Process Group Ranks"), "\"[0, 1]\"");
  EXPECT_EQ(arg(args, "Global rank start"), "0");
  EXPECT_EQ(arg(args, "Global rank stride"), "1");
  EXPECT_EQ(arg(args, "Rank"), "1");
  // Ranks that are no arithmetic progression have no start and stride.
  const auto odd = record_param_comms_args({"allreduce", 8, 8, "Float", 0}, {"1", "tp", {0, 2, 3}});
  EXPECT_EQ(arg(odd, "Global rank start"), "-1");
  EXPECT_EQ(arg(odd, "Global rank stride"), "-1");
  EXPECT_EQ(arg(odd, "Process Group Ranks"), "\"[0, 2, 3]\"");
}

TEST(Comms, RankFileNameIsTensorboardTraceHandlers) {
  EXPECT_EQ(rank_trace_file(3, 1764171234567890123), "rank3.1764171234567890123.pt.trace.json");
}

// record_param_comms { nccl:all_reduce { cuLaunchKernelEx } } and the kernel it launched: the builder copies the op's
// args onto the kernel, and the writer puts both, and distributedInfo, where torch does.
TEST(Comms, KernelCarriesItsCollectiveArgsInTheWrittenTrace) {
  const ProcessGroup group{"0", "default_pg", {0, 1}};
  std::vector<Event> host = {host_range("ProfilerStep#2", Cat::UserAnnotation, 1000, 9000, 1),
                             host_range("record_param_comms", Cat::CpuOp, 1100, 3000, 2),
                             host_range("nccl:all_reduce", Cat::UserAnnotation, 1200, 2900, 3),
                             host_range("aten::linear", Cat::CpuOp, 3100, 3500, 4)};
  host[1].extra_args = std::make_shared<const std::vector<std::pair<std::string, std::string>>>(
      record_param_comms_args({"allreduce", 6291456, 6291456, "BFloat16", 0}, group));
  Records recs;
  ApiRecord launch;
  launch.driver = true;
  launch.name = "cuLaunchKernelEx";
  launch.pid = kPid;
  launch.tid = kMain;
  launch.start_ns = 1300;
  launch.end_ns = 1800;
  launch.correlation = 9;
  recs.api.push_back(launch);
  ApiRecord mm = launch;
  mm.driver = false;
  mm.name = "cudaLaunchKernel_v7000";
  mm.start_ns = 3200, mm.end_ns = 3300, mm.correlation = 10;
  recs.api.push_back(mm);
  GpuRecord k;
  k.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  k.start_ns = 2000, k.end_ns = 6000, k.correlation = 9, k.args.stream = 21;
  recs.gpu.push_back(k);
  GpuRecord gemm = k;
  gemm.name = "nvjet_gemm", gemm.start_ns = 6100, gemm.end_ns = 7000, gemm.correlation = 10, gemm.args.stream = 7;
  recs.gpu.push_back(gemm);
  recs.ext = {{ExternalRecord::Op, 2, 9},
              {ExternalRecord::UserRange, 3, 9},
              {ExternalRecord::Op, 4, 10},
              {ExternalRecord::UserRange, 1, 10}};

  Trace trace;
  trace.events = build_events(recs, host, 0, 100000).events;
  trace.metadata["distributedInfo"] = distributed_info_json(0, 2, group, "2.28.3");
  const nlohmann::json j = nlohmann::json::parse(trace_to_json(trace));

  const nlohmann::json& info = j.at("distributedInfo");
  EXPECT_EQ(info.at("backend"), "nccl");
  EXPECT_EQ(info.at("rank"), 0);
  EXPECT_EQ(info.at("world_size"), 2);
  EXPECT_EQ(info.at("nccl_version"), "2.28.3");
  EXPECT_EQ(info.at("pg_config").at(0).at("ranks"), nlohmann::json::parse("[0, 1]"));
  EXPECT_EQ(info.at("pg_config").at(0).at("pg_size"), 2);

  int ops = 0, kernels = 0, spans = 0;
  for (const nlohmann::json& e : j.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const nlohmann::json& a = e.at("args");
    if (e.at("name") == "record_param_comms") {
      ++ops;
      EXPECT_EQ(e.at("cat"), "cpu_op");
      EXPECT_EQ(a.at("External id"), 2);
      EXPECT_EQ(a.at("Collective name"), "allreduce");
      EXPECT_EQ(a.at("In msg nelems"), 6291456);
      EXPECT_EQ(a.at("Process Group Ranks"), "[0, 1]");
    } else if (e.at("cat") == "kernel" && e.at("name").get<std::string>().rfind("ncclDevKernel", 0) == 0) {
      ++kernels;
      EXPECT_EQ(a.at("External id"), 2);  // the op's, not nccl:all_reduce's (a user range)
      EXPECT_EQ(a.at("Collective name"), "allreduce");
      EXPECT_EQ(a.at("Out msg nelems"), 6291456);
      EXPECT_EQ(a.at("dtype"), "BFloat16");
      EXPECT_EQ(a.at("Group size"), 2);
      EXPECT_EQ(a.at("stream"), 21);  // the kernel's own keys come first, unchanged
    } else if (e.at("cat") == "kernel") {
      EXPECT_FALSE(a.contains("Collective name")) << "only the collective's kernel carries its args";
    } else if (e.at("cat") == "gpu_user_annotation" && e.at("name") == "nccl:all_reduce") {
      ++spans;
      EXPECT_EQ(e.at("tid"), 21);
    }
  }
  EXPECT_EQ(ops, 1);
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(spans, 1);
}

TEST(Comms, AnArgThatIsNotJsonFailsTheWriteNamingIt) {
  Trace trace;
  Event e = host_range("record_param_comms", Cat::CpuOp, 1000, 2000, 1);
  e.extra_args = std::make_shared<const std::vector<std::pair<std::string, std::string>>>(
      std::vector<std::pair<std::string, std::string>>{{"dtype", "BFloat16"}});  // unquoted
  trace.events.push_back(e);
  try {
    trace_to_json(trace);
    FAIL() << "no error";
  } catch (const TraceError& err) {
    EXPECT_NE(std::string(err.what()).find("arg \"dtype\""), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace ladder
