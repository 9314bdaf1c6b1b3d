// The profiler schedule, step by step, against torch.profiler.schedule.
#include <gtest/gtest.h>

#include "profiler/schedule.h"

namespace ladder {
namespace {

TEST(Schedule, StepStatesLikeTorch) {
  using A = StepAction;
  const Schedule s113{1, 1, 3};
  const std::vector<A> want113 = {A::None, A::Warmup, A::Record, A::Record, A::RecordAndSave, A::None};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(step_action(s113, k), want113[k]) << "1/1/3 step " << k;
  EXPECT_EQ(s113.total_steps(), 5);

  const Schedule s001{0, 0, 1};
  EXPECT_EQ(step_action(s001, 0), A::RecordAndSave);
  EXPECT_EQ(step_action(s001, 1), A::None);

  const Schedule s202{2, 0, 2};
  const std::vector<A> want202 = {A::None, A::None, A::Record, A::RecordAndSave};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(step_action(s202, k), want202[k]) << "2/0/2 step " << k;

  EXPECT_STREQ(step_action_name(A::None), "NONE");
  EXPECT_STREQ(step_action_name(A::Warmup), "WARMUP");
  EXPECT_STREQ(step_action_name(A::Record), "RECORD");
  EXPECT_STREQ(step_action_name(A::RecordAndSave), "RECORD_AND_SAVE");
}

}  // namespace
}  // namespace ladder
