// 07_tp_mlp: the GeGLU MLP of 04_epilogue_mlp split over several GPUs, one process per GPU, tensor parallel.
//
// What this rung shows: rank r holds hidden units [r*H/N, (r+1)*H/N): those rows of W_gate and W_up, the same columns
// of W_down. x is replicated. Each rank runs 04's fused gate/up GEMM on its shard and the down GEMM on its slice of m,
// which gives it a partial y; one NCCL all-reduce sums the partials, and every rank holds the whole y. The math per
// GPU drops N-fold; what comes in is an all-reduce of all of y (12.6 MB at the blog's shape) over NVLink.
//   --mode tp       the two GEMMs, then the all-reduce of y on the communication stream (PyTorch's TP plan)
//   --mode overlap  the rows in --chunks chunks: chunk i's all-reduce runs while chunk i+1's GEMMs do
//   --mode sp       sequence parallel: x and y split by rows; an all-gather of x, the GEMMs, a reduce-scatter of y
//   --window        the collectives' buffers in NCCL windows: NCCL's symmetric kernels instead of its ring
//   --nccl-sms N    NCCL's collectives on N blocks, and overlap's GEMMs on the other SMs, so the two run side by side
//
// Guess before you look: the all-reduce moves 12.6 MB per rank over links of a few hundred GB/s, and the forward
// takes under 200 us on one H100. Does splitting the GEMMs over two GPUs pay for it? And at 4x the batch?
//
// What each rank's trace shows (one folder per run, one file per rank, as tensorboard_trace_handler writes them):
// the GEMMs on the default stream, ncclDevKernel_AllReduce_* on a stream of their own, and on the CPU lane a
// record_param_comms op around nccl:all_reduce, with torch's collective args, as PyTorch writes them.
// Run:   mpirun -np 2 build/07_tp_mlp --batch 64 --seq 128 --dim 768 --hidden 3072 --mode overlap
// Trace: traces/07_tp_mlp_overlap_b64_s128_d768_h3072_np2/rank<r>.<ns>.pt.trace.json, and rank<r>.txt
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <tuple>

#include "04_epilogue_mlp/kernels.cuh"
#include "07_tp_mlp/nccl_comm.h"
#include "07_tp_mlp/rank_gpu.h"
#include "07_tp_mlp/rank_output.h"
#include "07_tp_mlp/timing.h"
#include "07_tp_mlp/tp_mlp.h"
#include "07_tp_mlp/world.h"
#include "chapter/chapter.h"
#include "chapter/gpu_timer.h"
#include "chapter/paths.h"
#include "chapter/reference.h"
#include "cuda/check.h"
#include "gpu/memory.h"
#include "gpu/ops.h"
#include "gpu/stream.h"
#include "gpu/values.h"
#include "profiler/comms.h"
#include "profiler/profiler.h"
#include "trace/model/json_write.h"
#include "work/ladder_ops.h"

using namespace ladder;
using ch07::stage;

int main(int argc, char** argv) {
  ch07::World world(&argc, &argv);
  const int rank = world.rank(), ranks = world.size();

  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string mode = "overlap", kernel;
  int chunks = 2;  // the best of 2, 4 and 8 in --mode overlap on two H100s, at the blog's shape and at 4x the batch
  int nccl_sms = 0;
  bool window = false;
  double nccl_timeout = 60;
  CommonOptions common;
  CLI::App app{"07_tp_mlp: the GeGLU MLP over several GPUs, tensor parallel (mpirun -np N, one GPU per rank)"};
  for (auto [name, var, what] : {std::tuple{"--batch", &batch, "sequences in x"},
                                 {"--seq", &seq, "tokens per sequence (x has batch x seq rows)"},
                                 {"--dim", &dim, "model width: features of x and y (a multiple of 8)"},
                                 {"--hidden", &hidden, "hidden width of the MLP (hidden/ranks a multiple of 8)"}})
    app.add_option(name, *var, what)->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--mode", mode,
                 "what the profiled forward runs: tp (GEMMs, then one all-reduce), overlap "
                 "(chunks whose all-reduces overlap the next chunk's GEMMs) or sp (x and y split by rows: an "
                 "all-gather of x, the GEMMs, a reduce-scatter of y)")
      ->check(CLI::IsMember({"tp", "overlap", "sp"}))
      ->capture_default_str();
  app.add_option("--chunks", chunks, "chunks of rows in --mode overlap")
      ->check(int_range(1, 64))
      ->capture_default_str();
  app.add_option("--nccl-sms", nccl_sms,
                 "SMs for NCCL: every collective runs on this many blocks, and --mode overlap's GEMMs leave this many "
                 "SMs free, so the all-reduce of the chunk before runs beside them (0: NCCL's choice, and the GEMMs "
                 "take every SM)")
      ->check(int_range(0, 1024))
      ->capture_default_str();
  app.add_flag("--window", window,
               "put the buffers the collectives read and write in NCCL windows (ncclMemAlloc, "
               "ncclCommWindowRegister), where NCCL runs its symmetric kernels instead of its ring");
  app.add_option("--kernel", kernel,
                 "variant of 04's geglu_gemm kernel: " + variant_names(ch04::geglu_gemm_variants()));
  app.add_option("--nccl-timeout", nccl_timeout, "seconds a rank waits for a collective before it gives up")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  add_common_options(app, common);

  // ---- 1. the command line, the same on every rank: only rank 0 speaks --------------------------------------------
  int rc = -1;
  {
    const ch07::QuietUnlessRankZero quiet(rank);
    rc = parse_options(app, argc, argv);
  }
  std::string line;
  for (int i = 1; i < argc; ++i) line += std::string(argv[i]) + '\0';
  const std::vector<uint64_t> lines = world.all_gather(static_cast<uint64_t>(std::hash<std::string>{}(line)));
  if (std::any_of(lines.begin(), lines.end(), [&](uint64_t h) { return h != lines[0]; })) {
    if (rank == 0)
      fmt::print(stderr,
                 "error: the ranks were started with different arguments: start every rank with "
                 "the same command line\n");
    return 2;
  }
  if (rc >= 0) return rc;

  const int64_t rows = batch * seq, hs = hidden / ranks;
  const int64_t rows_per_rank = (rows + ranks - 1) / ranks, padded = rows_per_rank * ranks;  // --mode sp's split
  const DType dt = DType::BF16;
  const std::string folder = [&] {
    std::string p =
        trace_path(common, "07_tp_mlp",
                   fmt::format("{}_b{}_s{}_d{}_h{}_np{}{}{}", mode, batch, seq, dim, hidden, ranks,
                               window ? "_window" : "", nccl_sms > 0 ? fmt::format("_ncclsms{}", nccl_sms) : ""));
    return p.substr(0, p.size() - 5);  // no ".json": a folder of rank files
  }();

  // ---- 2. what can be refused before any GPU work ------------------------------------------------------------------
  if ((rc = stage(world, [&] {
         ladder::register_ladder_ops_work();
         if (common.graph)
           throw UsageError("--graph: 07_tp_mlp replays no CUDA graph (its forward spans two streams and NCCL)");
         if (!kernel.empty()) ch04::find_geglu_gemm_variant(kernel);
         if (const std::string rule = ch07::tp_shape_rule(dim, hidden, ranks); !rule.empty()) throw UsageError(rule);
         check_trace_dir(common.trace_dir);
       })) >= 0)
    return rc;

  // ---- 3. one GPU per rank -----------------------------------------------------------------------------------------
  GpuInfo gpu;
  if ((rc = stage(world, [&] { gpu = ch07::take_rank_gpu(world); })) >= 0) return rc;
  if ((rc = stage(world, [&] { ch07::require_distinct_gpus(world, gpu); })) >= 0) return rc;
  if ((rc = stage(world, [&] {
         if (kernel.empty()) kernel = ch04::geglu_gemm_default_variant(gpu.major, gpu.minor);
         if (nccl_sms >= gpu.sms)
           throw UsageError(
               fmt::format("--nccl-sms {}: the GPU has {} SMs, and the GEMMs need some of them", nccl_sms, gpu.sms));
         if (const std::string why = ch04::geglu_gemm_cannot_run(kernel, gpu.major, gpu.minor); !why.empty())
           throw UsageError(why);
         require_fits({{rows, dim},
                       {hidden, dim},
                       {hidden, dim},
                       {dim, hidden},
                       {rows, hidden},
                       {rows, hidden / ranks},
                       {rows, dim},
                       {rows, dim},
                       {rows, dim},
                       {rows_per_rank, dim},
                       {padded, dim},
                       {padded, hs},
                       {padded, dim},
                       {rows_per_rank, dim},
                       {padded, dim}},
                      dt);
         if (rank == 0 && !common.check_only) ensure_writable_dir(folder);
       })) >= 0)
    return rc;

  // ---- 4. NCCL ----------------------------------------------------------------------------------------------------
  // The compute stream is the default one, where every chapter runs its ops (the cuBLASLt ops share one workspace
  // there); the communication stream is a non-blocking one, which the default stream never waits for unasked.
  ncclUniqueId id{};
  if ((rc = stage(world, [&] {
         if (rank == 0) id = ch07::new_unique_id();
       })) >= 0)
    return rc;
  world.broadcast(&id, sizeof(id));
  std::optional<ch07::Communicator> comm;
  if ((rc = stage(world, [&] { comm.emplace(world, id, nccl_timeout, nccl_sms); })) >= 0) return rc;

  // ---- 5. inputs, every forward once, each checked against the CPU on every rank, and the ranks against each other
  // Every rank makes the full weights from the same seeds as 04 (so the one-GPU forward prints 04's checksum) and
  // keeps its shard; the full ones serve the one-GPU forward the table compares with.
  const float bd = 1.0f / std::sqrt(float(dim)), bh = 1.0f / std::sqrt(float(hidden));
  const uint64_t sx = common.seed + 1, sgate = common.seed + 2, sup = common.seed + 3, sdown = common.seed + 4;
  std::optional<Tensor> x, gate, up, down, m_full, m, y_one, y_tp, y_overlap;
  std::optional<Tensor> x_rows, x_all, m_all, y_all, y_rows, y_sp;  // --mode sp: this rank's rows, and all of them
  std::optional<ch07::Shard> shard;
  std::optional<ch07::TensorParallelMlp> mlp;
  std::function<void()> one_gpu, tp, overlap, sp;
  std::string check_line;
  std::vector<std::string> sums;
  if ((rc = stage(world, [&] {
         x = random_tensor({batch, seq, dim}, sx, dt);
         gate = random_tensor({hidden, dim}, sgate, dt, -bd, bd);
         up = random_tensor({hidden, dim}, sup, dt, -bd, bd);
         down = random_tensor({dim, hidden}, sdown, dt, -bh, bh);
         shard = ch07::shard_weights(*gate, *up, *down, rank, ranks);
         m_full = empty({batch, seq, hidden}, dt);
         m = empty({batch, seq, hs}, dt);
         y_one = empty({batch, seq, dim}, dt);
         // What a collective reads or writes: in NCCL windows with --window, else in the ladder's own memory.
         const auto comm_buffer = [&](const Shape& shape) {
           return window ? comm->window_tensor(shape, dt) : empty(shape, dt);
         };
         y_tp = comm_buffer({batch, seq, dim});
         y_overlap = comm_buffer({batch, seq, dim});
         // Sequence parallel: this rank's rows of x (in a real model they arrive split; here they are cut from the
         // replicated x), zeros past the last row.
         x_rows = comm_buffer({rows_per_rank, dim});
         CUDA_CHECK(cudaMemset(x_rows->data, 0, x_rows->nbytes()));
         const int64_t first = std::min(rows, rank * rows_per_rank),
                       mine = std::min(rows, first + rows_per_rank) - first;
         CUDA_CHECK(cudaMemcpy(x_rows->data, static_cast<char*>(x->data) + first * dim * dtype_size(dt),
                               mine * dim * dtype_size(dt), cudaMemcpyDeviceToDevice));
         x_all = comm_buffer({padded, dim});
         m_all = empty({padded, hs}, dt);
         y_all = comm_buffer({padded, dim});
         y_rows = comm_buffer({rows_per_rank, dim});
         y_sp = empty({padded, dim}, dt);
         mlp.emplace(*shard, *comm, kernel, 64, nccl_sms > 0 ? gpu.sms - nccl_sms : 0);
         one_gpu = [&] {
           ch04::geglu_gemm(*x, *gate, *up, *m_full, kernel);
           ops::linear(*m_full, *down, nullptr, *y_one);
         };
         tp = [&] { mlp->tp(*x, *m, *y_tp); };
         overlap = [&] { mlp->overlap(*x, *m, *y_overlap, chunks); };
         sp = [&] { mlp->sp(*x_rows, *x_all, *m_all, *y_all, *y_rows); };
         for (const Tensor* t :
              {&*m_full, &*m, &*y_one, &*y_tp, &*y_overlap, &*x_all, &*m_all, &*y_all, &*y_rows, &*y_sp})
           poison(*t);
         one_gpu();
         tp();
         overlap();
         sp();
         comm->all_gather(*y_rows, *y_sp);  // for the check only: every rank's rows of sp's y, in order
         comm->sync();
         const Tensor y_sp_rows = view_of(y_sp->data, dt, {batch, seq, dim});  // without the padding rows
         ch07::ReferenceRows ref(sx, sgate, sup, sdown, dim, hidden, dt);
         for (auto [name, y] : {std::pair<const char*, const Tensor*>{"one GPU", &*y_one},
                                {"tp", &*y_tp},
                                {"overlap", &*y_overlap},
                                {"sp", &y_sp_rows}}) {
           const std::string c = ref.check(*y, rows, name);
           check_line += fmt::format("check ({}): {}\n", name, c);
           sums.push_back(fmt::format("{:#018x}", checksum(*y)));
         }
         const std::vector<float> a = to_host(*y_tp), b = to_host(y_sp_rows);
         size_t differ = 0;
         for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
         check_line += fmt::format("sp's y against tp's: {} of {} values differ\n", differ, a.size());
       })) >= 0)
    return rc;
  // Every rank holds the whole y after the all-reduce (and after sp's check gathered its rows): the same bits
  // everywhere, or the sum went wrong somewhere.
  const std::vector<std::string> all_sums = world.all_gather(sums[1] + " " + sums[2] + " " + sums[3]);
  if ((rc = stage(world, [&] {
         for (int r = 1; r < ranks; ++r) {
           if (all_sums[r] != all_sums[0])
             throw Error(
                 fmt::format("the ranks' outputs differ: rank {}'s tp, overlap and sp checksums are {}, rank 0's "
                             "{}",
                             r, all_sums[r], all_sums[0]));
         }
       })) >= 0)
    return rc;
  const std::vector<std::string> gpus = world.all_gather(
      fmt::format("rank {}: GPU {}: {} (sm_{}{}, {} SMs)", rank, gpu.id, gpu.name, gpu.major, gpu.minor, gpu.sms));
  if (rank == 0) {
    fmt::print("07_tp_mlp: {} ranks, NCCL {}; x [{}, {}] on every rank, each rank {} of the {} hidden units\n", ranks,
               ch07::nccl_version(), rows, dim, hs, hidden);
    for (const std::string& g : gpus) fmt::print("{}\n", g);
    fmt::print("geglu_gemm variant: {}\n", kernel);
    if (window) fmt::print("collectives on buffers in NCCL windows (--window): NCCL's symmetric kernels\n");
    if (nccl_sms > 0)
      fmt::print("NCCL's collectives on {} blocks, overlap's GEMMs on {} of the {} SMs (--nccl-sms)\n", nccl_sms,
                 gpu.sms - nccl_sms, gpu.sms);
    fmt::print("{}", check_line);
    fmt::print(
        "every rank passed the same checks; output checksums, the same on every rank: one GPU {}, tp {}, "
        "overlap {} ({} chunks), sp {}\n",
        sums[0], sums[1], sums[2], chunks, sums[3]);
  }
  if (common.check_only) return 0;

  // ---- 6. each rank profiles the chosen forward and writes its trace into the run's folder
  // ---------------------------
  const std::function<void()>& forward = mode == "tp" ? tp : mode == "sp" ? sp : overlap;
  std::optional<Trace> trace;
  std::string trace_file;
  if ((rc = stage(world, [&] { trace = ch07::profile_rank(common.schedule, forward, *comm); })) >= 0) return rc;
  // One stamp and one base time for every rank: rank 0's. The ranks share the host's clock (CLOCK_REALTIME, which
  // CUPTI stamps with), so the same ts is the same instant in every file of the folder.
  int64_t stamp[2] = {trace->window_start_ns.value_or(0), *trace->window_start_ns / 1000000000 * 1000000000};
  world.broadcast(stamp, sizeof(stamp));
  if ((rc = stage(world, [&] {
         trace->base_time_ns = stamp[1];
         trace->metadata["distributedInfo"] = distributed_info_json(rank, ranks, comm->group(), ch07::nccl_version());
         trace_file = folder + "/" + rank_trace_file(rank, stamp[0]);
         const ch07::StdoutToFile to_file(folder + fmt::format("/rank{}.txt", rank));
         fmt::print("{}\n", gpus[static_cast<size_t>(rank)]);  // "rank 1: GPU 1: NVIDIA H100 ..."
         write_trace(*trace, trace_file);
         ch07::print_rank_report(*trace, gpu);
       })) >= 0)
    return rc;

  // ---- 7. the forwards timed on every rank, side by side, and the all-reduce alone --------------------------------
  ch07::Timings t;
  if ((rc = stage(world, [&] {
         t = ch07::time_forwards(
             world, *comm, one_gpu, tp, [&](int c) { mlp->overlap(*x, *m, *y_overlap, c); }, chunks, sp, *y_tp,
             window ? &*y_one : nullptr, *trace);
       })) >= 0)
    return rc;
  if (rank == 0) {
    const std::string table = ch07::timing_table(t, ranks, rows, dim, mode, chunks, gpu.name);
    std::ofstream(folder + "/rank0.txt", std::ios::app) << "\n" << table;
    std::ifstream in(folder + "/rank0.txt");
    std::stringstream text;
    text << in.rdbuf();
    fmt::print("\n{}", text.str());
    fmt::print("\nEvery rank's trace and report are in {}/ ({}). Open them together with: {} ranks {}\n", folder,
               rank_trace_file(0, stamp[0]), ladder_trace_command(), folder);
  }
  return 0;
}
