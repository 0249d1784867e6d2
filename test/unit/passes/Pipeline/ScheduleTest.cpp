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
Action backwardInput(int64_t stage, int64_t microbatch) {
  return {ActionKind::BackwardInput, stage, microbatch};
}
Action backwardWeight(int64_t stage, int64_t microbatch) {
  return {ActionKind::BackwardWeight, stage, microbatch};
}
Action update(int64_t stage, int64_t level) { return {ActionKind::Update, stage, 0, -1, level}; }

using Kind = ScheduleSpec::Kind;
constexpr ActionKind F = ActionKind::Forward, B = ActionKind::BackwardInput,
                     W = ActionKind::BackwardWeight, U = ActionKind::Update;

/// A training step's transfers over `stages` stages: each stage's F feeds
/// the next stage's F, each B the previous stage's B (the gradient), and
/// each stage keeps its F's values for its B, and (with W parts) its B's
/// for its W.
std::vector<Transfer> chainTransfers(int64_t stages, bool weightParts = true) {
  std::vector<Transfer> transfers;
  for (int64_t stage = 0; stage + 1 < stages; ++stage)
    transfers.push_back({stage, stage + 1, F, F});
  for (int64_t stage = stages - 1; stage > 0; --stage)
    transfers.push_back({stage, stage - 1, B, B});
  for (int64_t stage = 0; stage < stages; ++stage)
    transfers.push_back({stage, stage, F, B});
  for (int64_t stage = 0; weightParts && stage < stages; ++stage)
    transfers.push_back({stage, stage, B, W});
  return transfers;
}

ScheduleSpec training(Kind kind, int64_t ranks, int64_t virtualStages, int64_t microbatches,
                      bool weightParts = true) {
  ScheduleSpec spec{ranks, virtualStages, microbatches, false,
                    chainTransfers(ranks * virtualStages, weightParts)};
  spec.kind = kind;
  spec.training = true;
  spec.hasWeightPart.assign(ranks * virtualStages, weightParts);
  return spec;
}

/// The schedule of `spec`, which must have one and pass checkSchedule.
Schedule build(const ScheduleSpec &spec) {
  std::optional<std::string> error;
  Schedule schedule = buildSchedule(spec, &error);
  EXPECT_EQ(error, std::nullopt);
  EXPECT_EQ(checkSchedule(spec, schedule), std::nullopt);
  return schedule;
}

/// The compute actions of one rank's list, in order.
std::vector<Action> computeOf(const std::vector<Action> &actions) {
  std::vector<Action> compute;
  for (const Action &action : actions)
    if (action.kind != ActionKind::Send && action.kind != ActionKind::Recv)
      compute.push_back(action);
  return compute;
}

Simulation simulate(const ScheduleSpec &spec, const Schedule &schedule) {
  std::string error;
  std::optional<Simulation> simulation = simulateSchedule(spec, schedule, &error);
  EXPECT_TRUE(simulation) << error;
  return simulation.value_or(Simulation{});
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

TEST(Schedule, DescribesTrainingActions) {
  EXPECT_EQ(describe(update(1, 0)), "update stage 1 level 0");
  EXPECT_EQ(describe(backwardInput(0, 2)), "backward_input stage 0 microbatch 2");
  EXPECT_EQ(describe(backwardWeight(3, 1)), "backward_weight stage 3 microbatch 1");
  EXPECT_NE(update(1, 0), update(1, 1));
  for (Kind kind :
       {Kind::GPipe, Kind::Interleaved, Kind::OneFOneB, Kind::ZeroBubbleH1, Kind::ZeroBubbleH2})
    EXPECT_EQ(parseScheduleKind(scheduleKindName(kind)), kind);
  EXPECT_EQ(scheduleKindName(Kind::OneFOneB), std::string("1f1b"));
  EXPECT_EQ(parseScheduleKind("zb-h3"), std::nullopt);
}

TEST(Schedule, OneFOneBInterleavesForwardsAndBackwards) {
  // P = 2, M = 3. Transfers: 0 F0->F1, 1 B1->B0 (the gradient), 2 F0->B0
  // and 3 F1->B1 (kept on the rank), 4 B0->W0 and 5 B1->W1 (likewise).
  ScheduleSpec spec = training(Kind::OneFOneB, 2, 1, 3);
  ASSERT_EQ(spec.transfers.size(), 6u);
  Schedule schedule = build(spec);
  ASSERT_EQ(schedule.size(), 2u);
  // Rank 0: one warm-up forward, then F(next) B(oldest) W, then the last B W.
  EXPECT_EQ(
      schedule[0],
      (std::vector<Action>{forward(0, 0), send(1, 0, 0), forward(0, 1), send(1, 1, 0),
                           recv(1, 0, 1), backwardInput(0, 0), backwardWeight(0, 0), forward(0, 2),
                           send(1, 2, 0), recv(1, 1, 1), backwardInput(0, 1), backwardWeight(0, 1),
                           recv(1, 2, 1), backwardInput(0, 2), backwardWeight(0, 2)}));
  // Rank 1 (the last stage): F B W per micro-batch; the gradient leaves
  // right after B, before W.
  EXPECT_EQ(
      schedule[1],
      (std::vector<Action>{recv(0, 0, 0), forward(1, 0), backwardInput(1, 0), send(0, 0, 1),
                           backwardWeight(1, 0), recv(0, 1, 0), forward(1, 1), backwardInput(1, 1),
                           send(0, 1, 1), backwardWeight(1, 1), recv(0, 2, 0), forward(1, 2),
                           backwardInput(1, 2), send(0, 2, 1), backwardWeight(1, 2)}));
  // In time (F = B = W = 1): rank 0's B0 waits for rank 1's gradient.
  Simulation simulation = simulate(spec, schedule);
  EXPECT_EQ(simulation.makespan, 11);
  std::vector<double> computeStarts;
  for (size_t index = 0; index < schedule[0].size(); ++index)
    if (schedule[0][index].kind != ActionKind::Send && schedule[0][index].kind != ActionKind::Recv)
      computeStarts.push_back(simulation.start[0][index]);
  EXPECT_EQ(computeStarts, (std::vector<double>{0, 1, 3, 4, 5, 6, 7, 9, 10}));
  EXPECT_EQ(simulation.busy, (std::vector<double>{9, 9}));
  EXPECT_EQ(simulation.peakInFlight, (std::vector<int64_t>{2, 1}));
}

TEST(Schedule, GPipeTrainingRunsEveryForwardFirst) {
  ScheduleSpec spec = training(Kind::GPipe, 2, 1, 2);
  spec.hasWeightPart = {true, false}; // stage 1's B does all of its backward
  spec.transfers = {{0, 1, F, F}, {1, 0, B, B}, {0, 0, F, B}, {1, 1, F, B}, {0, 0, B, W}};
  Schedule schedule = build(spec);
  EXPECT_EQ(computeOf(schedule[0]),
            (std::vector<Action>{forward(0, 0), forward(0, 1), backwardInput(0, 0),
                                 backwardWeight(0, 0), backwardInput(0, 1), backwardWeight(0, 1)}));
  EXPECT_EQ(computeOf(schedule[1]),
            (std::vector<Action>{forward(1, 0), forward(1, 1), backwardInput(1, 0),
                                 backwardInput(1, 1)}));
}

TEST(Schedule, UpdatesComeLastByLevel) {
  // Each stage's level 0 sends its partial gradient norm to the other
  // stage's level 1; stage 1 has a level 2 reading its own level 1.
  ScheduleSpec spec = training(Kind::OneFOneB, 2, 1, 1);
  spec.updateLevels = {2, 3};
  int64_t first = int64_t(spec.transfers.size());
  spec.transfers.push_back({0, 1, U, U, 0, 1});
  spec.transfers.push_back({1, 0, U, U, 0, 1});
  spec.transfers.push_back({1, 1, U, U, 1, 2});
  Schedule schedule = build(spec);
  std::vector<Action> tail0(schedule[0].end() - 4, schedule[0].end());
  EXPECT_EQ(tail0, (std::vector<Action>{update(0, 0), send(1, 0, first), recv(1, 0, first + 1),
                                        update(0, 1)}));
  std::vector<Action> tail1(schedule[1].end() - 5, schedule[1].end());
  EXPECT_EQ(tail1, (std::vector<Action>{update(1, 0), send(0, 0, first + 1), recv(0, 0, first),
                                        update(1, 1), update(1, 2)}));
  // Planted: stage 1's update before its last W.
  Schedule early = schedule;
  auto at = std::find(early[1].begin(), early[1].end(), update(1, 0));
  early[1].erase(at);
  early[1].insert(std::find(early[1].begin(), early[1].end(), backwardWeight(1, 0)), update(1, 0));
  std::optional<std::string> error = checkSchedule(spec, early);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("(update stage 1 level 0): runs before backward_weight stage 1 "
                        "microbatch 0"),
            std::string::npos)
      << *error;
  // Planted: level 2 before level 1, whose value it reads on this rank.
  Schedule swapped = schedule;
  std::iter_swap(swapped[1].end() - 2, swapped[1].end() - 1);
  error = checkSchedule(spec, swapped);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("(update stage 1 level 2): transfer " + std::to_string(first + 2) +
                        " of its micro-batch is made by update stage 1 level 1 on this pp "
                        "rank, which has not run before it"),
            std::string::npos)
      << *error;
  // Planted: an update run twice, and a level the stage does not have.
  Schedule twice = schedule;
  twice[0].push_back(update(0, 1));
  EXPECT_NE(checkSchedule(spec, twice)->find("runs twice"), std::string::npos);
  Schedule noLevel = schedule;
  noLevel[0].push_back(update(0, 2));
  EXPECT_NE(checkSchedule(spec, noLevel)->find("stage 0 has 2 update levels"), std::string::npos);
  Schedule missing = schedule;
  missing[1].pop_back();
  EXPECT_EQ(checkSchedule(spec, missing), "no rank runs update stage 1 level 2");
}

TEST(Schedule, OneRankKeepsEveryTransfer) {
  // P = 1, V = 2 as 1F1B cannot hold: the interleaved schedule on one rank
  // (M a multiple of P = 1). Every transfer stays on the rank: no send or
  // receive at all.
  ScheduleSpec spec = training(Kind::Interleaved, 1, 2, 2);
  Schedule schedule = build(spec);
  ASSERT_EQ(schedule.size(), 1u);
  EXPECT_EQ(computeOf(schedule[0]).size(), schedule[0].size());
  EXPECT_EQ(schedule[0].size(), 2u * 2 * 3);
}

TEST(Schedule, InterleavedTrainingFollowsMegatron) {
  // P = 2, V = 2, M = 4: rank 0 (stages 0, 2) warms up with
  // (P-p-1)*2 + (V-1)*P = 4 forwards, rank 1 (stages 1, 3) with 2; the
  // backwards go through the chunks in reverse (stage 2 before stage 0).
  ScheduleSpec spec = training(Kind::Interleaved, 2, 2, 4);
  Schedule schedule = build(spec);
  EXPECT_EQ(
      computeOf(schedule[0]),
      (std::vector<Action>{
          forward(0, 0),        forward(0, 1),        forward(2, 0),        forward(2, 1),
          forward(0, 2),        backwardInput(2, 0),  backwardWeight(2, 0), forward(0, 3),
          backwardInput(2, 1),  backwardWeight(2, 1), forward(2, 2),        backwardInput(0, 0),
          backwardWeight(0, 0), forward(2, 3),        backwardInput(0, 1),  backwardWeight(0, 1),
          backwardInput(2, 2),  backwardWeight(2, 2), backwardInput(2, 3),  backwardWeight(2, 3),
          backwardInput(0, 2),  backwardWeight(0, 2), backwardInput(0, 3),  backwardWeight(0, 3)}));
  EXPECT_EQ(
      computeOf(schedule[1]),
      (std::vector<Action>{
          forward(1, 0),        forward(1, 1),        forward(3, 0),        backwardInput(3, 0),
          backwardWeight(3, 0), forward(3, 1),        backwardInput(3, 1),  backwardWeight(3, 1),
          forward(1, 2),        backwardInput(1, 0),  backwardWeight(1, 0), forward(1, 3),
          backwardInput(1, 1),  backwardWeight(1, 1), forward(3, 2),        backwardInput(3, 2),
          backwardWeight(3, 2), forward(3, 3),        backwardInput(3, 3),  backwardWeight(3, 3),
          backwardInput(1, 2),  backwardWeight(1, 2), backwardInput(1, 3),  backwardWeight(1, 3)}));
  EXPECT_EQ(simulate(spec, schedule).peakInFlight, (std::vector<int64_t>{5, 3}));

  // P = 2, V = 3, M = 4: rank 0 warms up with 2 + 4 = 6 forwards.
  ScheduleSpec three = training(Kind::Interleaved, 2, 3, 4);
  Schedule threeSchedule = build(three);
  std::vector<Action> rank0 = computeOf(threeSchedule[0]);
  ASSERT_GE(rank0.size(), 8u);
  EXPECT_EQ(
      std::vector<Action>(rank0.begin(), rank0.begin() + 8),
      (std::vector<Action>{forward(0, 0), forward(0, 1), forward(2, 0), forward(2, 1),
                           forward(4, 0), forward(4, 1), forward(0, 2), backwardInput(4, 0)}));

  // P = 4, V = 2, M = 8: rank 0 warms up with 6 + 4 = 10, rank 3 with 4.
  ScheduleSpec wide = training(Kind::Interleaved, 4, 2, 8);
  Schedule wideSchedule = build(wide);
  rank0 = computeOf(wideSchedule[0]);
  ASSERT_GE(rank0.size(), 12u);
  EXPECT_EQ(
      std::vector<Action>(rank0.begin(), rank0.begin() + 12),
      (std::vector<Action>{forward(0, 0), forward(0, 1), forward(0, 2), forward(0, 3),
                           forward(4, 0), forward(4, 1), forward(4, 2), forward(4, 3),
                           forward(0, 4), forward(0, 5), forward(0, 6), backwardInput(4, 0)}));
  std::vector<Action> rank3 = computeOf(wideSchedule[3]);
  ASSERT_GE(rank3.size(), 6u);
  EXPECT_EQ(std::vector<Action>(rank3.begin(), rank3.begin() + 6),
            (std::vector<Action>{forward(3, 0), forward(3, 1), forward(3, 2), forward(3, 3),
                                 forward(7, 0), backwardInput(7, 0)}));
  EXPECT_EQ(simulate(wide, wideSchedule).peakInFlight, (std::vector<int64_t>{11, 9, 7, 5}));
}

TEST(Schedule, KindsRefuseWhatTheyCannotSchedule) {
  std::optional<std::string> error;
  Schedule schedule = buildSchedule(training(Kind::Interleaved, 2, 2, 3), &error);
  EXPECT_TRUE(schedule.empty());
  EXPECT_EQ(error, "the interleaved schedule needs micro-batches a multiple of the pipeline ranks "
                   "(Megatron-LM's rule): M=3, P=2");
  // The older flag spells the same kind.
  ScheduleSpec flagged{2, 2, 3, true, chainTransfers(4)};
  flagged.training = true;
  EXPECT_EQ(scheduleSpecError(flagged), error);
  EXPECT_EQ(scheduleSpecError(training(Kind::Interleaved, 2, 1, 4)),
            "the interleaved schedule needs virtual stages > 1 (V=1): use 1f1b");
  EXPECT_EQ(scheduleSpecError(training(Kind::ZeroBubbleH1, 2, 2, 4)),
            "the zb-h1 schedule runs one stage per pipeline rank, not V=2 virtual stages: use the "
            "interleaved schedule");
  // Inference keeps its forward orders for any M.
  EXPECT_EQ(scheduleSpecError(ScheduleSpec{2, 2, 3, true, {{0, 1}, {1, 2}, {2, 3}}}), std::nullopt);
  // Malformed specs.
  ScheduleSpec levels = training(Kind::OneFOneB, 2, 1, 2);
  levels.updateLevels = {1};
  EXPECT_EQ(scheduleSpecError(levels), "updateLevels has 1 entries for 2 stages");
  ScheduleSpec noWeight = training(Kind::OneFOneB, 2, 1, 2);
  noWeight.hasWeightPart = {true, false};
  EXPECT_EQ(scheduleSpecError(noWeight), "transfer 5 names the backward_weight program of stage "
                                         "1, which it does not have");
  ScheduleSpec mixed = training(Kind::OneFOneB, 2, 1, 2);
  mixed.updateLevels = {1, 1};
  mixed.transfers.push_back({0, 1, B, U, 0, 0});
  EXPECT_NE(scheduleSpecError(mixed)->find("an update runs once per step"), std::string::npos);
  ScheduleSpec negative = training(Kind::OneFOneB, 2, 1, 2);
  negative.forwardSeconds = {1, -1};
  EXPECT_NE(scheduleSpecError(negative)->find("forwardSeconds has -1"), std::string::npos);
}

TEST(Schedule, CheckFindsTrainingMistakes) {
  ScheduleSpec spec = training(Kind::OneFOneB, 2, 1, 3);
  Schedule schedule = build(spec);
  // A B before its F on the same rank.
  Schedule early = schedule;
  std::iter_swap(std::find(early[0].begin(), early[0].end(), forward(0, 0)),
                 std::find(early[0].begin(), early[0].end(), backwardInput(0, 0)));
  EXPECT_EQ(checkSchedule(spec, early), "pp rank 0, action 0 (backward_input stage 0 microbatch "
                                        "0): runs before forward stage 0 microbatch 0");
  // A W before its B.
  Schedule wFirst = schedule;
  std::iter_swap(std::find(wFirst[1].begin(), wFirst[1].end(), backwardInput(1, 1)),
                 std::find(wFirst[1].begin(), wFirst[1].end(), backwardWeight(1, 1)));
  EXPECT_NE(checkSchedule(spec, wFirst)
                ->find("(backward_weight stage 1 microbatch 1): runs "
                       "before backward_input stage 1 microbatch 1"),
            std::string::npos);
  // A W missing.
  Schedule missing = schedule;
  missing[1].erase(std::find(missing[1].begin(), missing[1].end(), backwardWeight(1, 2)));
  EXPECT_EQ(checkSchedule(spec, missing), "no rank runs backward_weight stage 1 microbatch 2");
  // A W for a stage whose B does all of its backward.
  ScheduleSpec noWeight = training(Kind::OneFOneB, 2, 1, 3, /*weightParts=*/false);
  Schedule extra = build(noWeight);
  extra[0].push_back(backwardWeight(0, 2));
  EXPECT_NE(checkSchedule(noWeight, extra)->find("stage 0 has no backward_weight program"),
            std::string::npos);
  // Two receives of a pair swapped.
  Schedule swapped = schedule;
  std::iter_swap(std::find(swapped[1].begin(), swapped[1].end(), recv(0, 0, 0)),
                 std::find(swapped[1].begin(), swapped[1].end(), recv(0, 1, 0)));
  std::optional<std::string> error = checkSchedule(spec, swapped);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("the next message from pp rank 0 is transfer 0 microbatch 0"),
            std::string::npos)
      << *error;
  // The gradient's receive dropped: rank 0's B goes without it.
  Schedule unreceived = schedule;
  unreceived[0].erase(std::find(unreceived[0].begin(), unreceived[0].end(), recv(1, 0, 1)));
  EXPECT_EQ(checkSchedule(spec, unreceived),
            "pp rank 0, action 4 (backward_input stage 0 microbatch 0): transfer 1 of its "
            "micro-batch was not received before it");
  // A send before the B that makes it.
  Schedule sendFirst = schedule;
  std::iter_swap(std::find(sendFirst[1].begin(), sendFirst[1].end(), backwardInput(1, 0)),
                 std::find(sendFirst[1].begin(), sendFirst[1].end(), send(0, 0, 1)));
  EXPECT_NE(checkSchedule(spec, sendFirst)->find("sends before the backward_input that makes it"),
            std::string::npos);
  // Without `training` an update is refused, as backward actions are.
  ScheduleSpec inference{2, 1, 3, false, {{0, 1}}};
  inference.updateLevels = {1, 1};
  Schedule updates = buildSchedule(inference);
  updates[0].push_back(update(0, 0));
  EXPECT_NE(checkSchedule(inference, updates)->find("update actions need a training program"),
            std::string::npos);
}

TEST(Schedule, ZeroBubbleOrders) {
  // ZB-H1: 1F1B with rank p's W's put off by p B's.
  Schedule h1 = build(training(Kind::ZeroBubbleH1, 2, 1, 4));
  EXPECT_EQ(computeOf(h1[0]),
            (std::vector<Action>{forward(0, 0), forward(0, 1), backwardInput(0, 0),
                                 backwardWeight(0, 0), forward(0, 2), backwardInput(0, 1),
                                 backwardWeight(0, 1), forward(0, 3), backwardInput(0, 2),
                                 backwardWeight(0, 2), backwardInput(0, 3), backwardWeight(0, 3)}));
  EXPECT_EQ(computeOf(h1[1]),
            (std::vector<Action>{forward(1, 0), backwardInput(1, 0), forward(1, 1),
                                 backwardInput(1, 1), backwardWeight(1, 0), forward(1, 2),
                                 backwardInput(1, 2), backwardWeight(1, 1), forward(1, 3),
                                 backwardInput(1, 3), backwardWeight(1, 2), backwardWeight(1, 3)}));
  // ZB-H2: the greedy run (B, then F while fewer than 2P-1 = 3 are in
  // flight, then W), worked by hand for F = B = W = 1.
  Schedule h2 = build(training(Kind::ZeroBubbleH2, 2, 1, 4));
  EXPECT_EQ(computeOf(h2[0]),
            (std::vector<Action>{forward(0, 0), forward(0, 1), forward(0, 2), backwardInput(0, 0),
                                 backwardWeight(0, 0), backwardInput(0, 1), forward(0, 3),
                                 backwardInput(0, 2), backwardWeight(0, 1), backwardWeight(0, 2),
                                 backwardInput(0, 3), backwardWeight(0, 3)}));
  EXPECT_EQ(
      computeOf(h2[1]),
      (std::vector<Action>{forward(1, 0), backwardInput(1, 0), forward(1, 1), backwardInput(1, 1),
                           forward(1, 2), backwardInput(1, 2), backwardWeight(1, 0), forward(1, 3),
                           backwardInput(1, 3), backwardWeight(1, 1), backwardWeight(1, 2),
                           backwardWeight(1, 3)}));
}

TEST(Schedule, SimulatedBubblesMatchTheFormulas) {
  // Unit costs F = B = W = 1, each rank 3M of work. With a W part the
  // gradient leaves after B: 1F1B and GPipe idle (P-1)(F+B) per rank;
  // ZB-H1 (P-1)(F+B-W); ZB-H2 (P-1)F, the least any schedule can have (the
  // last rank's first F waits for P-1 forwards). Without one (B does all
  // of the backward, the paper's baseline) 1F1B and GPipe idle
  // (P-1)(F+B+W).
  for (int64_t ranks : {2, 4})
    for (int64_t microbatches : {4, 8}) {
      SCOPED_TRACE("P=" + std::to_string(ranks) + " M=" + std::to_string(microbatches));
      auto run = [&](Kind kind, bool weightParts) {
        ScheduleSpec spec = training(kind, ranks, 1, microbatches, weightParts);
        return simulate(spec, build(spec));
      };
      double work = 3.0 * microbatches;
      struct Expected {
        Kind kind;
        bool weightParts;
        double idle;
      };
      for (Expected expected : {Expected{Kind::GPipe, true, 2.0 * (ranks - 1)},
                                Expected{Kind::OneFOneB, true, 2.0 * (ranks - 1)},
                                Expected{Kind::ZeroBubbleH1, true, 1.0 * (ranks - 1)},
                                Expected{Kind::ZeroBubbleH2, true, 1.0 * (ranks - 1)},
                                Expected{Kind::GPipe, false, 3.0 * (ranks - 1)},
                                Expected{Kind::OneFOneB, false, 3.0 * (ranks - 1)},
                                Expected{Kind::ZeroBubbleH1, false, 3.0 * (ranks - 1)}}) {
        SCOPED_TRACE(std::string(scheduleKindName(expected.kind)) +
                     (expected.weightParts ? " with W" : " without W"));
        Simulation simulation = run(expected.kind, expected.weightParts);
        EXPECT_EQ(simulation.makespan, work + expected.idle);
        for (int64_t rank = 0; rank < ranks; ++rank) {
          EXPECT_EQ(simulation.busy[rank], work);
          EXPECT_EQ(simulation.idle(rank), expected.idle);
          EXPECT_NEAR(simulation.bubble(rank), expected.idle / (work + expected.idle), 1e-12);
        }
      }
      // Peak micro-batches in flight (F done, W not): 1F1B P - p, ZB-H1 P
      // on every rank (1F1B's most), ZB-H2 at most 2P-1, GPipe M.
      Simulation oneFOneB = run(Kind::OneFOneB, true), h1 = run(Kind::ZeroBubbleH1, true),
                 h2 = run(Kind::ZeroBubbleH2, true), gpipe = run(Kind::GPipe, true);
      for (int64_t rank = 0; rank < ranks; ++rank) {
        EXPECT_EQ(oneFOneB.peakInFlight[rank], ranks - rank);
        EXPECT_EQ(h1.peakInFlight[rank], ranks);
        EXPECT_LE(h2.peakInFlight[rank], 2 * ranks - 1);
        EXPECT_EQ(gpipe.peakInFlight[rank], microbatches);
      }
      EXPECT_EQ(h2.peakInFlight[0], std::min(2 * ranks - 1, microbatches));
    }
}

TEST(Schedule, ZeroBubbleBeatsOneFOneBWhenWIsCheap) {
  // P = 4, M = 8, F = B = 1, W = 0.5 on every stage: each rank has 20 s of
  // work. 1F1B idles (P-1)(F+B) = 6, ZB-H1 (P-1)(F+B-W) = 4.5, ZB-H2
  // (P-1)F = 3.
  auto run = [](Kind kind) {
    ScheduleSpec spec = training(kind, 4, 1, 8);
    spec.forwardSeconds.assign(4, 1);
    spec.backwardInputSeconds.assign(4, 1);
    spec.backwardWeightSeconds.assign(4, 0.5);
    return simulate(spec, build(spec));
  };
  Simulation oneFOneB = run(Kind::OneFOneB), h1 = run(Kind::ZeroBubbleH1),
             h2 = run(Kind::ZeroBubbleH2);
  for (int64_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(oneFOneB.busy[rank], 20);
    EXPECT_EQ(oneFOneB.idle(rank), 6);
    EXPECT_EQ(h1.idle(rank), 4.5);
    EXPECT_EQ(h2.idle(rank), 3);
  }
  EXPECT_LT(h1.bubble(0), oneFOneB.bubble(0));
  EXPECT_NEAR(oneFOneB.bubble(0), 6.0 / 26, 1e-12);
}

TEST(Schedule, SimulationWaitsForTheSender) {
  // Inference: rank 1's forward waits for rank 0's; a deadlocked list is an
  // error, not a hang.
  ScheduleSpec spec{2, 1, 2, false, {{0, 1}}};
  spec.forwardSeconds = {2, 1};
  Simulation simulation = simulate(spec, buildSchedule(spec));
  EXPECT_EQ(simulation.makespan, 5);
  EXPECT_EQ(simulation.start[1], (std::vector<double>{2, 2, 4, 4}));
  EXPECT_EQ(simulation.peakInFlight, (std::vector<int64_t>{0, 0}));
  std::string error;
  EXPECT_FALSE(simulateSchedule(spec, {{forward(0, 0)}, {recv(0, 0, 0), forward(1, 0)}}, &error));
  EXPECT_NE(error.find("waits forever"), std::string::npos) << error;
}

TEST(Schedule, AChainsMicrobatchesInFlightFollowTheSchedule) {
  using Kind = ScheduleSpec::Kind;
  // 1F1B: pp rank p holds P - p; GPipe all M; ZB-H1 as 1F1B on the first
  // rank (the paper: 1F1B's peak memory).
  EXPECT_EQ(chainInFlight(Kind::OneFOneB, 4, 1, 8), (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(chainInFlight(Kind::GPipe, 4, 1, 8), (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(chainInFlight(Kind::ZeroBubbleH1, 4, 1, 8).front(), 4);
  // Fewer micro-batches than stages: 1F1B degenerates to fill-drain.
  EXPECT_EQ(chainInFlight(Kind::OneFOneB, 4, 1, 2), (std::vector<int64_t>{2, 2, 2, 1}));
  // Interleaved needs M a multiple of P: no schedule, no figures.
  EXPECT_TRUE(chainInFlight(Kind::Interleaved, 2, 2, 3).empty());
}

} // namespace
} // namespace shardc::pipeline
