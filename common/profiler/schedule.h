// The profiler's schedule, like torch.profiler.schedule. Pure logic: tested on the CPU.
#pragma once

namespace ladder {

// torch.profiler.schedule(wait, warmup, active): wait steps are not traced, warmup steps are traced and thrown away
// (the first CUPTI records carry one-time costs), active steps are kept. With 1/1/3 the trace holds
// ProfilerStep#2..#4.
struct Schedule {
  int wait = 1;
  int warmup = 1;
  int active = 3;
  int total_steps() const { return wait + warmup + active; }
};
enum class StepAction { None, Warmup, Record, RecordAndSave };
StepAction step_action(const Schedule& schedule, int step);  // RecordAndSave on the last active step
const char* step_action_name(StepAction action);              // "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"

}  // namespace ladder
