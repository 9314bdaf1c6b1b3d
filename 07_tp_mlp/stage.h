// How the ranks of a run fail together. A run is a list of named stages; every rank runs each one:
//   1. the stage's local part: work that needs no other rank (a throw there is this rank's failure);
//   2. agree(): the ranks exchange their outcomes (World::agree); a failure anywhere ends the stage on every rank;
//   3. the stage's cross-rank part, if it has one (an MPI exchange, an NCCL init, collectives), only once every rank
//      has agreed to go on, then agree() again.
// Every wait is bounded by one deadline, --timeout: MPI exchanges poll their messages, NCCL's init and the waits for
// collectives poll ncclCommGetAsyncError, and a watchdog ends a rank whose stage runs past it (an event wait, or a
// blocking NCCL call, included).
// A failure every rank reports through agree() is printed once, by rank 0, and every rank returns its exit code. A
// rank that cannot agree (a peer missed the deadline, or left the run) prints one line naming the stage and the rank,
// aborts its NCCL communicator and exits with kStopExit; so does a rank that mpirun stops because another one ended.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "07_tp_mlp/world.h"
#include "base/error.h"

namespace ch07 {

// A wait that passed the deadline (a collective, an NCCL init): most likely the sign of another rank's failure, so
// agree() reports a peer's own failure before it.
struct WaitError : ladder::Error {
  explicit WaitError(const std::string& what) : ladder::Error(what, 1) {}
};

// The exit status of a rank that stops without an agreement: a deadline passed, or a peer left the run.
constexpr int kStopExit = 3;

// The deadline of every wait, in seconds (--timeout; 60 until the options are read).
void set_timeout(double seconds);
double timeout_s();
// How long agree() waits for the others: the deadline plus a margin, so that a peer whose own wait passed the deadline
// (a collective, an NCCL init) still arrives to say so, and the watchdog of a rank stuck in its stage speaks first.
double agree_timeout_s();
// The stage this rank is in ("" before the first): the failure lines name it.
const std::string& current_stage();

// What this rank must do before it exits in the middle of a run: abort its NCCL communicator. Set by the one
// Communicator while it lives (nullptr: nothing).
void on_stop(std::function<void()> abort);

// Prints `line`, runs the on_stop hook (given a few seconds at most) and exits with kStopExit, from any thread.
[[noreturn]] void stop_run(const std::string& line);

// Runs one stage on every rank: `local`, agree, then `cross` (if any) and agree again. Returns -1 to go on, else the
// agreed exit code, after rank 0 printed the one line "error: ..." and every rank aborted its communicator.
int stage(const World& world, const char* name, const std::function<void()>& local,
          const std::function<void()>& cross = {});

// The run's stage names, in order, set once before the first stage: what LADDER_07_FAULT may name.
void declare_stages(const std::vector<std::string>& names);

// Fault injection, for the tests: LADDER_07_FAULT=STAGE:RANK:KIND makes rank RANK fail at the start of the stage named
// STAGE (its local part, or its cross-rank part when it has no local one): KIND throw (a ladder::Error), stall (it
// sleeps until it is stopped) or exit (it ends at once with status 1, without a word, as a crash would). The first
// stage reads it: a malformed value or an unknown stage is a usage error there, on every rank alike.

}  // namespace ch07
