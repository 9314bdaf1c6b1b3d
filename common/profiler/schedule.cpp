#include "profiler/schedule.h"

namespace ladder {

StepAction step_action(const Schedule& s, int step) {
  if (step < s.wait || step >= s.total_steps() || s.active <= 0) return StepAction::None;
  if (step < s.wait + s.warmup) return StepAction::Warmup;
  return step == s.total_steps() - 1 ? StepAction::RecordAndSave : StepAction::Record;
}

const char* step_action_name(StepAction action) {
  switch (action) {
    case StepAction::None:
      return "NONE";
    case StepAction::Warmup:
      return "WARMUP";
    case StepAction::Record:
      return "RECORD";
    case StepAction::RecordAndSave:
      return "RECORD_AND_SAVE";
  }
  return "?";
}

}  // namespace ladder
