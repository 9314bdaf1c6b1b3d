#include "07_tp_mlp/stage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace ch07 {

namespace {

using Clock = std::chrono::steady_clock;

// The watchdog ends a stage part this much after the deadline: a wait that polls (an MPI exchange, an NCCL call)
// reports first, with its own words, and the watchdog catches what does not poll (an event wait, a stuck call).
constexpr double kWatchdogGraceS = 2;
// agree() waits this much past the deadline (stage.h); more than the watchdog's grace.
constexpr double kAgreeMarginS = 4;
// How long stop_run gives the on_stop hook (ncclCommAbort) before it exits anyway.
constexpr double kAbortGraceS = 5;

double g_timeout_s = 60;
std::string g_stage;
std::function<void()> g_abort;
std::atomic<bool> g_agreed_stop{false};  // the run ends by agreement: a SIGTERM from mpirun is no news
std::atomic<bool> g_stopping{false};

// What a rank says when mpirun stops it (its SIGTERM handler may only write() a ready buffer).
char g_sigterm_line[512] = "";
std::atomic<size_t> g_sigterm_len{0};

void on_sigterm(int) {
  if (!g_agreed_stop.load()) {
    const ssize_t ignored = write(2, g_sigterm_line, g_sigterm_len.load());
    (void)ignored;
  }
  std::_Exit(kStopExit);
}

struct Fault {
  std::string stage, kind;
  int rank = -1;
};
std::vector<std::string> g_stages;

Fault read_fault() {
  Fault f;
  const char* value = std::getenv("LADDER_07_FAULT");
  if (!value || !*value) return f;
  const std::string v = value;
  const size_t a = v.find(':'), b = v.rfind(':');
  if (a != std::string::npos && b > a) {
    f.stage = v.substr(0, a);
    f.kind = v.substr(b + 1);
    const std::string rank = v.substr(a + 1, b - a - 1);
    if (!rank.empty() && rank.find_first_not_of("0123456789") == std::string::npos && rank.size() < 6)
      f.rank = std::stoi(rank);
  }
  if (f.rank < 0 || (f.kind != "throw" && f.kind != "stall" && f.kind != "exit"))
    throw ladder::UsageError(fmt::format("LADDER_07_FAULT: expected STAGE:RANK:throw|stall|exit, got \"{}\"", v));
  if (std::find(g_stages.begin(), g_stages.end(), f.stage) == g_stages.end())
    throw ladder::UsageError(
        fmt::format("LADDER_07_FAULT: no stage \"{}\" (the stages: {})", f.stage, fmt::join(g_stages, ", ")));
  return f;
}

// One thread for the whole run; Watch arms it for one stage part.
class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog();  // never destroyed: its thread may outlive main's return
    return *w;
  }
  void arm(const std::string& line, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(mutex_);
    line_ = line;
    deadline_ = deadline;
    armed_ = true;
    ++generation_;
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    ++generation_;
    cv_.notify_all();
  }

 private:
  Watchdog() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return armed_; });
      const uint64_t generation = generation_;
      if (!cv_.wait_until(lock, deadline_, [&] { return generation_ != generation; })) {
        const std::string line = line_;
        lock.unlock();
        stop_run(line);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool armed_ = false;
  uint64_t generation_ = 0;
  std::string line_;
  Clock::time_point deadline_;
};

class Watch {
 public:
  Watch(const std::string& stage, int rank) {
    const double limit = g_timeout_s + kWatchdogGraceS;
    Watchdog::get().arm(
        fmt::format("error: stage \"{}\": rank {} did not finish it within {:g} s (--timeout): it "
                    "stops, and mpirun stops the others",
                    stage, rank, g_timeout_s),
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit)));
  }
  ~Watch() { Watchdog::get().disarm(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
};

void enter(const char* name, int rank) {
  static bool installed = false;
  if (!installed) {
    struct sigaction action = {};
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    installed = true;
  }
  g_stage = name;
  const std::string line = fmt::format(
      "error: stage \"{}\": rank {} was stopped by mpirun (SIGTERM): another rank ended first (its line, or mpirun's, "
      "says why), or the run was interrupted\n",
      name, rank);
  const size_t n = std::min(line.size(), sizeof(g_sigterm_line) - 1);
  g_sigterm_len = 0;
  std::memcpy(g_sigterm_line, line.data(), n);
  g_sigterm_len = n;
}

void inject_fault(const char* name, int rank) {
  static const Fault fault = read_fault();  // the first stage's throw, if it is malformed
  if (fault.rank != rank || fault.stage != name) return;
  if (fault.kind == "throw")
    throw ladder::Error(fmt::format("the fault injected by LADDER_07_FAULT ({}:{}:throw)", name, rank));
  if (fault.kind == "exit") std::_Exit(1);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // stall
}

// Runs the on_stop hook (ncclCommAbort, which ends the communicator's kernels) on a thread of its own and waits for it
// kAbortGraceS at most: should it hang on a wedged GPU, the rank goes on to exit anyway.
void abort_communicator() {
  if (!g_abort) return;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([abort = g_abort, done] {
    abort();
    *done = true;
  }).detach();
  const auto until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kAbortGraceS));
  while (!*done && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// One part of a stage on this rank: its outcome, a throw caught.
World::Outcome run_part(const World& world, const char* name, const std::function<void()>& body, bool first) {
  const Watch watch(name, world.rank());
  try {
    if (first) inject_fault(name, world.rank());
    body();
  } catch (const WaitError& e) {
    return {e.exit_code, e.what(), true};
  } catch (const ladder::Error& e) {
    return {e.exit_code != 0 ? e.exit_code : 1, e.what(), false};
  } catch (const std::exception& e) {
    return {1, e.what(), false};
  }
  return {};
}

}  // namespace

void set_timeout(double seconds) { g_timeout_s = seconds; }
double timeout_s() { return g_timeout_s; }
double agree_timeout_s() { return g_timeout_s + kAgreeMarginS; }
const std::string& current_stage() { return g_stage; }
void on_stop(std::function<void()> abort) { g_abort = std::move(abort); }

void stop_run(const std::string& line) {
  if (g_stopping.exchange(true)) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // another thread is stopping the rank
  }
  g_agreed_stop = true;  // this rank has said its line: a SIGTERM now adds nothing
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  abort_communicator();
  std::_Exit(kStopExit);
}

int stage(const World& world, const char* name, const std::function<void()>& local,
          const std::function<void()>& cross) {
  enter(name, world.rank());
  World::Outcome all = world.agree(run_part(world, name, local ? local : cross, true));
  if (all.code == 0 && local && cross) all = world.agree(run_part(world, name, cross, false));
  if (all.code == 0) return -1;
  g_agreed_stop = true;
  abort_communicator();
  if (world.rank() == 0) {
    std::fflush(stdout);
    if (all.alike)
      std::fprintf(stderr, "error: %s\n", all.message.c_str());
    else
      std::fprintf(stderr, "error: stage \"%s\": rank %d: %s\n", name, all.rank, all.message.c_str());
    std::fflush(stderr);
  }
  return all.code;
}

void declare_stages(const std::vector<std::string>& names) { g_stages = names; }

}  // namespace ch07
