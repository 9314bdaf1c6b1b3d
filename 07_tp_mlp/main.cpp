// 07_tp_mlp: the GeGLU MLP of 04_epilogue_mlp split over several GPUs, one process per GPU, tensor parallel.
//
// What this rung shows: rank r holds hidden units [r*H/N, (r+1)*H/N): those rows of W_gate and W_up, the same columns
// of W_down. x is replicated. Each rank runs 04's fused gate/up GEMM on its shard and the down GEMM on its slice of m,
// which gives it a partial y; one NCCL all-reduce sums the partials, and every rank holds the whole y. The math per
// GPU drops N-fold; what comes in is an all-reduce of all of y (12.6 MB at the blog's shape) over NVLink.
//   --mode tp       the two GEMMs, then the all-reduce of y on the communication stream (PyTorch's TP plan)
//   --mode overlap  the rows in --chunks chunks: chunk i's all-reduce runs while chunk i+1's GEMMs do
//   --mode sp       sequence parallel: x and y split by rows; an all-gather of x, the GEMMs, a reduce-scatter of y
//   --mode fused    sp, but the down GEMM writes each owner's rows straight into its memory (NCCL's device API) and
//                   a small kernel adds them up there: no NCCL collective kernel for the reduce-scatter
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
//
// The run is a list of named stages (stage.h): each rank does a stage's local work, the ranks agree that every one
// succeeded, and only then does a cross-rank step (MPI or NCCL) run. One rank's failure ends the run on every rank,
// with one line naming the stage and the rank, within --timeout and a few seconds.
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
#include "07_tp_mlp/stage.h"
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

namespace {

// The stages, in the order a run passes them (LADDER_07_FAULT names one of them).
const std::vector<std::string> kStages = {"arguments", "refusals", "gpu",          "fits",     "nccl-id",
                                          "nccl-init", "buffers",  "comm-buffers", "forwards", "checks",
                                          "compare",   "report",   "profile",      "stamp",    "trace",
                                          "timing",    "graphs",   "replays",      "figures",  "table"};

struct Options {
  int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;
  std::string mode = "overlap", kernel;
  int chunks = 2;  // the best of 2, 4 and 8 in --mode overlap on two H100s, at the blog's shape and at 4x the batch
  int nccl_sms = 0;
  bool window = false;
  double timeout = 60;
  CommonOptions common;
};

void add_options(CLI::App& app, Options& o) {
  for (auto [name, var, what] : {std::tuple{"--batch", &o.batch, "sequences in x"},
                                 {"--seq", &o.seq, "tokens per sequence (x has batch x seq rows)"},
                                 {"--dim", &o.dim, "model width: features of x and y (a multiple of 8)"},
                                 {"--hidden", &o.hidden, "hidden width of the MLP (hidden/ranks a multiple of 8)"}})
    app.add_option(name, *var, what)->check(int_range(1, kMaxDim))->capture_default_str();
  app.add_option("--mode", o.mode,
                 "what the profiled forward runs: tp (GEMMs, then one all-reduce), overlap "
                 "(chunks whose all-reduces overlap the next chunk's GEMMs) or sp (x and y split by rows: an "
                 "all-gather of x, the GEMMs, a reduce-scatter of y) or fused (sp, with the down GEMM writing each "
                 "rank's rows into that rank's memory, NCCL 2.28's device API)")
      ->check(CLI::IsMember({"tp", "overlap", "sp", "fused"}))
      ->capture_default_str();
  app.add_option("--chunks", o.chunks, "chunks of rows in --mode overlap")
      ->check(int_range(1, 64))
      ->capture_default_str();
  app.add_option("--nccl-sms", o.nccl_sms,
                 "SMs for NCCL: every collective runs on this many blocks, and --mode overlap's GEMMs leave this many "
                 "SMs free, so the all-reduce of the chunk before runs beside them (0: NCCL's choice, and the GEMMs "
                 "take every SM)")
      ->check(int_range(0, 1024))
      ->capture_default_str();
  app.add_flag("--window", o.window,
               "put the buffers the collectives read and write in NCCL windows (ncclMemAlloc, "
               "ncclCommWindowRegister), where NCCL runs its symmetric kernels instead of its ring");
  app.add_option("--kernel", o.kernel,
                 "variant of 04's geglu_gemm kernel: " + variant_names(ch04::geglu_gemm_variants()));
  app.add_option("--timeout,--nccl-timeout", o.timeout,
                 "seconds a rank waits for the others (an MPI exchange, NCCL's init, a collective) and the longest "
                 "a stage may run; past it the run stops on every rank")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  add_common_options(app, o.common);
}

// What a stage leaves for the next ones: the GPU, the communicator, the tensors, the forwards, the results.
class Run {
 public:
  explicit Run(const ch07::World& world) : world_(world), rank_(world.rank()), ranks_(world.size()) {}
  // Each returns -1 to go on, else the exit code of the run (0: done).
  int arguments(int argc, char** argv);
  int refusals();
  int take_gpu();
  int start_nccl();
  int make_buffers();
  int check_forwards();
  int profile();
  int time_forwards();

 private:
  void make_forwards();
  void check_outputs();
  void print_checks() const;
  void print_table(const ch07::Timings& t) const;

  const ch07::World& world_;
  const int rank_, ranks_;
  Options o_;
  int64_t rows_ = 0, hs_ = 0, rows_per_rank_ = 0, padded_ = 0;  // padded_: --mode sp's rows, ranks x rows_per_rank_
  const DType dt_ = DType::BF16;
  std::string folder_;
  GpuInfo gpu_;
  std::vector<std::string> gpus_;  // every rank's GPU line
  std::optional<ch07::Communicator> comm_;
  std::optional<Tensor> x_, gate_, up_, down_, m_full_, m_, y_one_, y_tp_, y_overlap_;
  std::optional<Tensor> x_rows_, x_all_, m_all_, y_all_, y_rows_, y_sp_;  // --mode sp: this rank's rows, and all
  std::optional<ch07::PeerSlots> slots_;          // --mode fused's inboxes, when it can run here
  std::optional<Tensor> y_fused_rows_, y_fused_;  // --mode fused: this rank's rows of y, and all of them
  std::string fused_note_;                        // why fused cannot run here, when it cannot
  std::optional<ch07::Shard> shard_;
  std::optional<ch07::TensorParallelMlp> mlp_;
  ch07::Forwards forwards_;
  std::string check_lines_;
  std::vector<std::string> sums_;  // checksums of the one-GPU, tp, overlap and sp outputs
  std::optional<Trace> trace_;
  int64_t stamp_[2] = {0, 0};  // rank 0's: the trace files' stamp, and the base time of every rank's trace
};

// ---- the command line, the same on every rank: only rank 0 speaks ------------------------------------------------
int Run::arguments(int argc, char** argv) {
  CLI::App app{"07_tp_mlp: the GeGLU MLP over several GPUs, tensor parallel (mpirun -np N, one GPU per rank)"};
  add_options(app, o_);
  int parsed = -1;
  std::string line;
  for (int i = 1; i < argc; ++i) line += std::string(argv[i]) + '\0';
  int rc = stage(
      world_, "arguments",
      [&] {
        const ch07::QuietUnlessRankZero quiet(rank_);
        parsed = parse_options(app, argc, argv);
        ch07::set_timeout(o_.timeout);
      },
      [&] {
        const std::vector<uint64_t> hashes = world_.all_gather(static_cast<uint64_t>(std::hash<std::string>{}(line)));
        if (std::any_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h != hashes[0]; }))
          throw UsageError(
              "the ranks were started with different arguments: start every rank with the same "
              "command line");
      });
  return rc >= 0 ? rc : parsed;
}

// ---- what can be refused before any GPU work -----------------------------------------------------------------------
int Run::refusals() {
  rows_ = o_.batch * o_.seq;
  hs_ = o_.hidden / ranks_;
  rows_per_rank_ = (rows_ + ranks_ - 1) / ranks_;
  padded_ = rows_per_rank_ * ranks_;
  const std::string p = trace_path(
      o_.common, "07_tp_mlp",
      fmt::format("{}_b{}_s{}_d{}_h{}_np{}{}{}", o_.mode, o_.batch, o_.seq, o_.dim, o_.hidden, ranks_,
                  o_.window ? "_window" : "", o_.nccl_sms > 0 ? fmt::format("_ncclsms{}", o_.nccl_sms) : ""));
  folder_ = p.substr(0, p.size() - 5);  // no ".json": a folder of rank files
  return stage(world_, "refusals", [&] {
    ladder::register_ladder_ops_work();
    if (o_.common.graph)
      throw UsageError("--graph: 07_tp_mlp replays no CUDA graph (its forward spans two streams and NCCL)");
    if (!o_.kernel.empty()) ch04::find_geglu_gemm_variant(o_.kernel);
    if (const std::string rule = ch07::tp_shape_rule(o_.dim, o_.hidden, ranks_); !rule.empty()) throw UsageError(rule);
    check_trace_dir(o_.common.trace_dir);
  });
}

// ---- one GPU per rank, and what it must hold ---------------------------------------------------------------------
int Run::take_gpu() {
  int rc = stage(
      world_, "gpu", [&] { gpu_ = ch07::take_rank_gpu(world_); }, [&] { ch07::require_distinct_gpus(world_, gpu_); });
  if (rc >= 0) return rc;
  return stage(world_, "fits", [&] {
    if (o_.kernel.empty()) o_.kernel = ch04::geglu_gemm_default_variant(gpu_.major, gpu_.minor);
    if (o_.nccl_sms >= gpu_.sms)
      throw UsageError(
          fmt::format("--nccl-sms {}: the GPU has {} SMs, and the GEMMs need some of them", o_.nccl_sms, gpu_.sms));
    if (const std::string why = ch04::geglu_gemm_cannot_run(o_.kernel, gpu_.major, gpu_.minor); !why.empty())
      throw UsageError(why);
    const int64_t r = rows_, d = o_.dim, h = o_.hidden, rr = rows_per_rank_, pad = padded_;
    require_fits({{r, d},
                  {h, d},
                  {h, d},
                  {d, h},
                  {r, h},
                  {r, hs_},
                  {r, d},
                  {r, d},
                  {r, d},
                  {rr, d},
                  {pad, d},
                  {pad, hs_},
                  {pad, d},
                  {rr, d},
                  {pad, d},
                  {pad, d},   // fused's inbox
                  {rr, d},    // fused's rows of y
                  {pad, d}},  // and all of them, for the check
                 dt_);
    if (rank_ == 0 && !o_.common.check_only) ensure_writable_dir(folder_);
  });
}

// ---- NCCL: rank 0's id to every rank, then the communicator ------------------------------------------------------
// The compute stream is the default one, where every chapter runs its ops (the cuBLASLt ops share one workspace
// there); the communication stream is a non-blocking one, which the default stream never waits for unasked.
int Run::start_nccl() {
  ncclUniqueId id{};
  int rc = stage(
      world_, "nccl-id",
      [&] {
        if (rank_ == 0) id = ch07::new_unique_id();
      },
      [&] { world_.broadcast(&id, sizeof(id)); });
  if (rc >= 0) return rc;
  return stage(world_, "nccl-init", {}, [&] { comm_.emplace(world_, id, o_.nccl_sms); });
}

// ---- the inputs and every buffer ------------------------------------------------------------------------------------
// Every rank makes the full weights from the same seeds as 04 (so the one-GPU forward prints 04's checksum) and keeps
// its shard; the full ones serve the one-GPU forward the table compares with. What a collective reads or writes is
// in NCCL windows with --window (registering one is collective), else in the ladder's own memory.
int Run::make_buffers() {
  const int64_t b = o_.batch, s = o_.seq, d = o_.dim;
  const auto comm_buffer = [&](const Shape& shape) {
    return o_.window ? comm_->window_tensor(shape, dt_) : empty(shape, dt_);
  };
  int rc = stage(world_, "buffers", [&] {
    const float bd = 1.0f / std::sqrt(float(d)), bh = 1.0f / std::sqrt(float(o_.hidden));
    const uint64_t seed = o_.common.seed;
    x_ = random_tensor({b, s, d}, seed + 1, dt_);
    gate_ = random_tensor({o_.hidden, d}, seed + 2, dt_, -bd, bd);
    up_ = random_tensor({o_.hidden, d}, seed + 3, dt_, -bd, bd);
    down_ = random_tensor({d, o_.hidden}, seed + 4, dt_, -bh, bh);
    shard_ = ch07::shard_weights(*gate_, *up_, *down_, rank_, ranks_);
    m_full_ = empty({b, s, o_.hidden}, dt_);
    m_ = empty({b, s, hs_}, dt_);
    y_one_ = empty({b, s, d}, dt_);
    m_all_ = empty({padded_, hs_}, dt_);
    y_sp_ = empty({padded_, d}, dt_);
    y_fused_rows_ = empty({rows_per_rank_, d}, dt_);
    y_fused_ = empty({padded_, d}, dt_);
  });
  if (rc >= 0) return rc;
  return stage(world_, "comm-buffers", {}, [&] {
    y_tp_ = comm_buffer({b, s, d});
    y_overlap_ = comm_buffer({b, s, d});
    x_rows_ = comm_buffer({rows_per_rank_, d});
    x_all_ = comm_buffer({padded_, d});
    y_all_ = comm_buffer({padded_, d});
    y_rows_ = comm_buffer({rows_per_rank_, d});
    // Sequence parallel: this rank's rows of x (in a real model they arrive split; here they are cut from the
    // replicated x), zeros past the last row.
    CUDA_CHECK(cudaMemset(x_rows_->data, 0, x_rows_->nbytes()));
    const int64_t first = std::min(rows_, rank_ * rows_per_rank_),
                  mine = std::min(rows_, first + rows_per_rank_) - first;
    CUDA_CHECK(cudaMemcpy(x_rows_->data, static_cast<char*>(x_->data) + first * d * dtype_size(dt_),
                          mine * d * dtype_size(dt_), cudaMemcpyDeviceToDevice));
    // fused's inboxes (collective: NCCL's device communicator and a window), only when asked for: NCCL gives them
    // only to ranks whose GPUs reach each other's memory (NVLink, or PCIe peer to peer), and refuses the others.
    if (o_.mode == "fused")
      slots_.emplace(*comm_, rows_per_rank_, d);
    else
      fused_note_ = "it runs with --mode fused";
    mlp_.emplace(*shard_, *comm_, o_.kernel, 64, o_.nccl_sms > 0 ? gpu_.sms - o_.nccl_sms : 0);
    make_forwards();
  });
}

void Run::make_forwards() {
  forwards_.one_gpu = [this] {
    ch04::geglu_gemm(*x_, *gate_, *up_, *m_full_, o_.kernel);
    ops::linear(*m_full_, *down_, nullptr, *y_one_);
  };
  forwards_.tp = [this] { mlp_->tp(*x_, *m_, *y_tp_); };
  forwards_.overlap = [this](int c) { mlp_->overlap(*x_, *m_, *y_overlap_, c); };
  forwards_.sp = [this] { mlp_->sp(*x_rows_, *x_all_, *m_all_, *y_all_, *y_rows_); };
  if (slots_) forwards_.fused = [this] { mlp_->fused(*x_rows_, *x_all_, *m_all_, *slots_, *y_fused_rows_); };
  forwards_.chunks = o_.chunks;
  forwards_.y = &*y_tp_;
  forwards_.y_plain = o_.window ? &*y_one_ : nullptr;
}

// ---- every forward once, each checked against the CPU on every rank, and the ranks against each other -------------
int Run::check_forwards() {
  int rc = stage(world_, "forwards", {}, [&] {
    for (const Tensor* t : {&*m_full_, &*m_, &*y_one_, &*y_tp_, &*y_overlap_, &*x_all_, &*m_all_, &*y_all_, &*y_rows_,
                            &*y_sp_, &*y_fused_rows_, &*y_fused_})
      poison(*t);
    // After each forward the host waits for its collectives, polled under the deadline: a peer that never comes is
    // noticed there, not in a CUDA call of the next forward that would wait for NCCL's kernel unpolled.
    forwards_.one_gpu();
    forwards_.tp();
    comm_->sync();
    forwards_.overlap(o_.chunks);
    comm_->sync();
    forwards_.sp();
    comm_->all_gather(*y_rows_, *y_sp_);  // for the check only: every rank's rows of sp's y, in order
    comm_->sync();
    if (forwards_.fused) {
      forwards_.fused();
      comm_->all_gather(*y_fused_rows_, *y_fused_);  // the same for fused
    }
    comm_->sync();
  });
  if (rc >= 0) return rc;
  if ((rc = stage(world_, "checks", [&] { check_outputs(); })) >= 0) return rc;
  // Every rank holds the whole y after the all-reduce (and after sp's check gathered its rows): the same bits
  // everywhere, or the sum went wrong somewhere.
  rc = stage(world_, "compare", {}, [&] {
    std::string mine;
    for (size_t i = 1; i < sums_.size(); ++i) mine += (i > 1 ? " " : "") + sums_[i];
    const std::vector<std::string> all = world_.all_gather(mine);
    for (int r = 1; r < ranks_; ++r) {
      if (all[static_cast<size_t>(r)] != all[0])
        throw Error(fmt::format("the ranks' outputs differ: rank {}'s tp, overlap, sp{} checksums are {}, rank 0's {}",
                                r, forwards_.fused ? " and fused" : "", all[static_cast<size_t>(r)], all[0]));
    }
    gpus_ = world_.all_gather(fmt::format("rank {}: GPU {}: {} (sm_{}{}, {} SMs)", rank_, gpu_.id, gpu_.name,
                                          gpu_.major, gpu_.minor, gpu_.sms));
  });
  if (rc >= 0) return rc;
  rc = stage(world_, "report", [&] {
    if (rank_ == 0) print_checks();
  });
  return rc < 0 && o_.common.check_only ? 0 : rc;
}

void Run::check_outputs() {
  const Tensor y_sp_rows = view_of(y_sp_->data, dt_, {o_.batch, o_.seq, o_.dim});  // without the padding rows
  const Tensor y_fused_rows = view_of(y_fused_->data, dt_, {o_.batch, o_.seq, o_.dim});
  ch07::ReferenceRows ref(o_.common.seed + 1, o_.common.seed + 2, o_.common.seed + 3, o_.common.seed + 4, o_.dim,
                          o_.hidden, dt_);
  for (auto [name, y] : {std::pair<const char*, const Tensor*>{"one GPU", &*y_one_},
                         {"tp", &*y_tp_},
                         {"overlap", &*y_overlap_},
                         {"sp", &y_sp_rows},
                         {"fused", &y_fused_rows}}) {
    if (y == &y_fused_rows && !forwards_.fused) {
      check_lines_ += fmt::format("check (fused): not run: {}\n", fused_note_);
      continue;
    }
    check_lines_ += fmt::format("check ({}): {}\n", name, ref.check(*y, rows_, name));
    sums_.push_back(fmt::format("{:#018x}", checksum(*y)));
  }
  const auto count_differ = [](const Tensor& x, const Tensor& y) {
    const std::vector<float> a = to_host(x), b = to_host(y);
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    return fmt::format("{} of {} values differ", differ, a.size());
  };
  check_lines_ += fmt::format("sp's y against tp's: {}\n", count_differ(*y_tp_, y_sp_rows));
  if (forwards_.fused)
    check_lines_ += fmt::format("fused's y against sp's: {}\n", count_differ(y_sp_rows, y_fused_rows));
}

void Run::print_checks() const {
  fmt::print("07_tp_mlp: {} ranks, NCCL {}; x [{}, {}] on every rank, each rank {} of the {} hidden units\n", ranks_,
             ch07::nccl_version(), rows_, o_.dim, hs_, o_.hidden);
  for (const std::string& g : gpus_) fmt::print("{}\n", g);
  fmt::print("geglu_gemm variant: {}\n", o_.kernel);
  if (o_.window) fmt::print("collectives on buffers in NCCL windows (--window): NCCL's symmetric kernels\n");
  if (o_.nccl_sms > 0)
    fmt::print("NCCL's collectives on {} blocks, overlap's GEMMs on {} of the {} SMs (--nccl-sms)\n", o_.nccl_sms,
               gpu_.sms - o_.nccl_sms, gpu_.sms);
  fmt::print("{}", check_lines_);
  fmt::print(
      "every rank passed the same checks; output checksums, the same on every rank: one GPU {}, tp {}, "
      "overlap {} ({} chunks), sp {}{}\n",
      sums_[0], sums_[1], sums_[2], o_.chunks, sums_[3], sums_.size() > 4 ? ", fused " + sums_[4] : "");
}

// ---- each rank profiles the chosen forward and writes its trace into the run's folder -----------------------------
int Run::profile() {
  std::function<void()> forward = [this] { forwards_.overlap(o_.chunks); };
  if (o_.mode == "tp") forward = forwards_.tp;
  if (o_.mode == "sp") forward = forwards_.sp;
  if (o_.mode == "fused") forward = forwards_.fused;
  int rc = stage(world_, "profile", {}, [&] { trace_ = ch07::profile_rank(o_.common.schedule, forward, *comm_); });
  if (rc >= 0) return rc;
  // One stamp and one base time for every rank: rank 0's. The ranks share the host's clock (CLOCK_REALTIME, which
  // CUPTI stamps with), so the same ts is the same instant in every file of the folder.
  rc = stage(
      world_, "stamp",
      [&] {
        if (!trace_->window_start_ns)
          throw Error("the profiler recorded no active step: the trace has no start time to stamp its file with");
        stamp_[0] = *trace_->window_start_ns;
        stamp_[1] = stamp_[0] / 1000000000 * 1000000000;
      },
      [&] { world_.broadcast(stamp_, sizeof(stamp_)); });
  if (rc >= 0) return rc;
  return stage(world_, "trace", [&] {
    trace_->base_time_ns = stamp_[1];
    trace_->metadata["distributedInfo"] = distributed_info_json(rank_, ranks_, comm_->group(), ch07::nccl_version());
    const ch07::StdoutToFile to_file(folder_ + fmt::format("/rank{}.txt", rank_));
    fmt::print("{}\n", gpus_[static_cast<size_t>(rank_)]);  // "rank 1: GPU 1: NVIDIA H100 ..."
    write_trace(*trace_, folder_ + "/" + rank_trace_file(rank_, stamp_[0]));
    ch07::print_rank_report(*trace_, gpu_);
  });
}

// ---- the forwards timed on every rank, side by side, and the all-reduce alone --------------------------------------
// Eager first (each forward at each chunk count then has run once, its NCCL connections made), then the CUDA graphs,
// captured on every rank before any is replayed: a capture that fails on one rank leaves out every rank's graph rows,
// and the table says why.
int Run::time_forwards() {
  ch07::Timings t;
  int rc = stage(world_, "timing", {}, [&] {
    t = ch07::time_eager(forwards_);
    t.fused_note = fused_note_;
  });
  if (rc >= 0) return rc;
  ch07::Graphs graphs;
  bool replay = false;
  rc = stage(
      world_, "graphs", [&] { graphs = ch07::capture_graphs(forwards_); },
      [&] {
        const std::vector<std::string> notes = world_.all_gather(graphs.note);
        for (int r = 0; r < ranks_ && t.graph_note.empty(); ++r)
          if (!notes[static_cast<size_t>(r)].empty())
            t.graph_note = fmt::format("rank {}: {}", r, notes[static_cast<size_t>(r)]);
        replay = t.graph_note.empty();
      });
  if (rc >= 0) return rc;
  rc = stage(world_, "replays", {},
             [&] { ch07::time_replays(t, forwards_, replay ? &graphs : nullptr, *comm_, *trace_); });
  if (rc >= 0) return rc;
  if ((rc = stage(world_, "figures", {}, [&] { t = ch07::share_timings(world_, t); })) >= 0) return rc;
  return stage(world_, "table", [&] {
    if (rank_ == 0) print_table(t);
  });
}

void Run::print_table(const ch07::Timings& t) const {
  const std::string table = ch07::timing_table(t, ranks_, rows_, o_.dim, o_.mode, o_.chunks, gpu_.name);
  std::ofstream(folder_ + "/rank0.txt", std::ios::app) << "\n" << table;
  std::ifstream in(folder_ + "/rank0.txt");
  std::stringstream text;
  text << in.rdbuf();
  fmt::print("\n{}", text.str());
  fmt::print("\nEvery rank's trace and report are in {}/ ({}). Open them together with: {} ranks {}\n", folder_,
             rank_trace_file(0, stamp_[0]), ladder_trace_command(), folder_);
}

}  // namespace

int main(int argc, char** argv) {
  ch07::World world(&argc, &argv);
  ch07::declare_stages(kStages);
  Run run(world);
  int rc = run.arguments(argc, argv);
  for (int (Run::*step)() : {&Run::refusals, &Run::take_gpu, &Run::start_nccl, &Run::make_buffers, &Run::check_forwards,
                             &Run::profile, &Run::time_forwards})
    if (rc < 0) rc = (run.*step)();
  return rc < 0 ? 0 : rc;
}
