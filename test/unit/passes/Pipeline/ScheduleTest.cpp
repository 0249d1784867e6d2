//===- ScheduleTest.cpp - pipeline ranks' action lists and their check -----===//
#include "passes/Pipeline/Schedule.h"

#include <gtest/gtest.h>

namespace shardc::pipeline {
namespace {

Action forward(int64_t stage, int64_t microbatch) {
  return {ActionKind::Forward, stage, microbatch};
}
Action send(int64_t toStage, int64_t microbatch, int64_t transfer) {
  return {ActionKind::Send, toStage, microbatch, transfer};
}
Action recv(int64_t fromStage, int64_t microbatch, int64_t transfer) {
  return {ActionKind::Recv, fromStage, microbatch, transfer};
}

TEST(Schedule, GPipeFillsAndDrains) {
  ScheduleSpec spec{2, 1, 2, false, {{0, 1}}};
  Schedule schedule = buildSchedule(spec);
  ASSERT_EQ(schedule.size(), 2u);
  EXPECT_EQ(schedule[0],
            (std::vector<Action>{forward(0, 0), send(1, 0, 0), forward(0, 1), send(1, 1, 0)}));
  EXPECT_EQ(schedule[1],
            (std::vector<Action>{recv(0, 0, 0), forward(1, 0), recv(0, 1, 0), forward(1, 1)}));
  EXPECT_EQ(checkSchedule(spec, schedule), std::nullopt);
}

TEST(Schedule, InterleavedRunsGroupsOfPThroughEachChunk) {
  // P = 2 ranks, V = 2 stages each (rank 0: stages 0 and 2), M = 4.
  ScheduleSpec spec{2, 2, 4, true, {{0, 1}, {1, 2}, {2, 3}}};
  Schedule schedule = buildSchedule(spec);
  std::vector<Action> forwards;
  for (const Action &action : schedule[0])
    if (action.kind == ActionKind::Forward)
      forwards.push_back(action);
  // Megatron-LM's forward order: micro-batches 0, 1 through stage 0, then
  // through stage 2, then micro-batches 2, 3 likewise.
  EXPECT_EQ(forwards,
            (std::vector<Action>{forward(0, 0), forward(0, 1), forward(2, 0), forward(2, 1),
                                 forward(0, 2), forward(0, 3), forward(2, 2), forward(2, 3)}));
  EXPECT_EQ(checkSchedule(spec, schedule), std::nullopt);
}

TEST(Schedule, ReceivesFollowTheSendersOrder) {
  // Stage 0 and stage 2 (both on rank 0) send to stage 3 (rank 1): rank 0
  // sends transfer 1 for micro-batches 0 and 1 before transfer 2 for
  // micro-batch 0, so rank 1 must receive in that order.
  ScheduleSpec spec{2, 2, 2, true, {{0, 1}, {0, 3}, {1, 2}, {2, 3}}};
  Schedule schedule = buildSchedule(spec);
  EXPECT_EQ(checkSchedule(spec, schedule), std::nullopt);
  // Swapping two receives of the pair breaks the order: named.
  std::vector<Action> &rank1 = schedule[1];
  auto first = std::find(rank1.begin(), rank1.end(), recv(0, 0, 0));
  auto second = std::find(rank1.begin(), rank1.end(), recv(0, 1, 0));
  ASSERT_NE(first, rank1.end());
  ASSERT_NE(second, rank1.end());
  std::iter_swap(first, second);
  std::optional<std::string> error = checkSchedule(spec, schedule);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("the next message from pp rank 0 is transfer 0 microbatch 0"),
            std::string::npos)
      << *error;
}

TEST(Schedule, CheckFindsADeadlock) {
  ScheduleSpec spec{2, 1, 1, false, {{0, 1}}};
  // Rank 0 forgets its send: rank 1 waits forever.
  Schedule schedule = {{forward(0, 0)}, {recv(0, 0, 0), forward(1, 0)}};
  std::optional<std::string> error = checkSchedule(spec, schedule);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "pp rank 1, action 0 (recv transfer 0 microbatch 0 from stage 0): waits "
                    "forever (deadlock: no peer sends it)");
}

TEST(Schedule, CheckFindsAForwardBeforeItsInput) {
  ScheduleSpec spec{2, 1, 1, false, {{0, 1}}};
  Schedule schedule = {{forward(0, 0), send(1, 0, 0)}, {forward(1, 0), recv(0, 0, 0)}};
  std::optional<std::string> error = checkSchedule(spec, schedule);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("was not received before it"), std::string::npos) << *error;
}

TEST(Schedule, CheckRefusesMisplacedAndMissingWork) {
  ScheduleSpec spec{2, 1, 2, false, {{0, 1}}};
  Schedule wrongRank = {{forward(1, 0)}, {}};
  ASSERT_TRUE(checkSchedule(spec, wrongRank));
  EXPECT_NE(checkSchedule(spec, wrongRank)->find("the stage runs on pp rank 1"), std::string::npos);
  Schedule missing = buildSchedule(spec);
  missing[1].pop_back(); // the last forward of stage 1
  EXPECT_EQ(checkSchedule(spec, missing), "no rank runs forward stage 1 microbatch 1");
  Schedule backward = buildSchedule(spec);
  backward[0].push_back({ActionKind::BackwardInput, 0, 0});
  EXPECT_NE(checkSchedule(spec, backward)->find("backward actions need a training program"),
            std::string::npos);
}

TEST(Schedule, UnreceivedMessagesAreNamed) {
  // Rank 0 sends the transfer twice; rank 1 receives it once.
  ScheduleSpec noReceiver{2, 1, 1, false, {{0, 1}}};
  Schedule schedule = {{forward(0, 0), send(1, 0, 0), send(1, 0, 0)},
                       {recv(0, 0, 0), forward(1, 0)}};
  std::optional<std::string> error = checkSchedule(noReceiver, schedule);
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "pp rank 1 never receives transfer 0 microbatch 0 that pp rank 0 sends");
}

} // namespace
} // namespace shardc::pipeline
