//===- StageSearchTest.cpp - the stage search's terms and choices ----------===//
//
// Every figure here is computed by hand from the problem's numbers, so a
// wrong term (a send counted in the compute, the in-flight activations
// forgotten, a weight counted twice) or a wrong choice fails a test.
//
//===----------------------------------------------------------------------===//
#include "passes/Pipeline/StageSearch.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace shardc::pipeline {
namespace {

/// n ops of the given seconds, nothing crossing, no weights, no limit.
StageProblem chain(std::vector<double> seconds, int64_t stages, int64_t microbatches = 1) {
  StageProblem problem;
  size_t ops = seconds.size();
  problem.opSeconds = std::move(seconds);
  problem.liveBytes.assign(ops, 0);
  problem.opWeights.assign(ops, {});
  problem.crossingBytes.assign(ops + 1, 0);
  problem.crossingValues.assign(ops + 1, 0);
  problem.stages = stages;
  problem.pipelineRanks = stages;
  problem.microbatches = microbatches;
  problem.linkBytesPerSecond = 1e30;
  return problem;
}

std::vector<size_t> ends(const StagePlan &plan) {
  std::vector<size_t> result;
  for (const StageFigures &stage : plan.stages)
    result.push_back(stage.end);
  return result;
}

TEST(StageSearch, FiguresOfAStage) {
  StageProblem problem = chain({1, 2, 3, 4}, 2, 2);
  problem.crossingBytes = {0, 10, 20, 30, 0};
  problem.crossingValues = {0, 1, 1, 2, 0};
  problem.liveBytes = {5, 6, 7, 8};
  problem.weightBytes = {100, 50};
  problem.opWeights = {{0}, {}, {0, 1}, {}};
  problem.linkLatencySeconds = 0.5;
  problem.linkBytesPerSecond = 10;
  StageFigures stage = stageFigures(problem, 1, 3);
  EXPECT_DOUBLE_EQ(stage.seconds, 2 + 3);
  // Sending the two values (30 bytes) that cross position 3: a latency each,
  // then the bytes over the bandwidth.
  EXPECT_DOUBLE_EQ(stage.sendSeconds, 2 * 0.5 + 30.0 / 10);
  // Weights 0 and 1, each once although op 2 and op 0 share weight 0.
  EXPECT_EQ(stage.weightBytes, 150);
  // Two micro-batches in flight, each with what comes in (10) and goes out
  // (30), plus the largest working set (op 2's 7 bytes).
  EXPECT_EQ(stage.activationBytes, 2 * (10 + 30) + 7);
  EXPECT_EQ(stage.memoryBytes(), 150 + 87);
}

/// Four equal ops; each keeps 100 bytes for the backward; 1F1B on 2 pp
/// ranks keeps 2 micro-batches on stage 0, 1 on stage 1 (GPipe: all 4).
StageProblem fourKeepingOps() {
  StageProblem problem = chain({1, 1, 1, 1}, 2, 4);
  problem.keptBytes = {100, 100, 100, 100};
  problem.crossingBytes = {0, 10, 10, 10, 0};
  problem.liveBytes = {5, 5, 5, 5};
  problem.inFlight = {2, 1};
  return problem;
}

TEST(StageSearch, ATrainingStageKeepsWhatItsBackwardReadsForItsMicrobatchesInFlight) {
  StageSearchResult result = searchStages(fourKeepingOps());
  ASSERT_TRUE(result.plan);
  ASSERT_EQ(ends(*result.plan), (std::vector<size_t>{2, 4}));
  // Stage 0: 2 x (its 200 kept bytes + 10 going out) + the working set.
  EXPECT_EQ(result.plan->stages[0].activationBytes, 2 * (200 + 10) + 5);
  // Stage 1: 1 x (200 kept + 10 coming in) + 5.
  EXPECT_EQ(result.plan->stages[1].activationBytes, 1 * (200 + 10) + 5);
}

TEST(StageSearch, FullRecomputeKeepsOnlyTheCrossingsPerMicrobatchInFlight) {
  // As above with --recompute full: each stage keeps per micro-batch in
  // flight only what crosses its ends; what its backward reads is live for
  // the one micro-batch whose backward runs, beside the working set.
  StageProblem problem = fourKeepingOps();
  problem.recompute = StageProblem::Recompute::Full;
  problem.forwardSeconds = {0.5, 0.5, 0.5, 0.5};
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan);
  ASSERT_EQ(ends(*result.plan), (std::vector<size_t>{2, 4}));
  // Each op's forward half a second of its 1 s runs again.
  EXPECT_DOUBLE_EQ(result.plan->stages[0].seconds, 2 + 2 * 0.5);
  EXPECT_TRUE(result.plan->stages[0].recomputed);
  EXPECT_EQ(result.plan->stages[0].keptBytes, 10);
  EXPECT_EQ(result.plan->stages[0].workingBytes, 200 + 5);
  EXPECT_EQ(result.plan->stages[0].activationBytes, 2 * 10 + 200 + 5);
  EXPECT_EQ(result.plan->stages[1].activationBytes, 1 * 10 + 200 + 5);
}

TEST(StageSearch, AutoRecomputesOnlyTheStagesThatDoNotFitOtherwise) {
  // A budget of 300 bytes: stage 0 (2 micro-batches in flight) keeps 425
  // bytes, 225 computed again; stage 1 keeps 215 and fits as it is. Every
  // other cut leaves a stage over 300 either way.
  StageProblem problem = fourKeepingOps();
  problem.recompute = StageProblem::Recompute::Auto;
  problem.forwardSeconds = {0.5, 0.5, 0.5, 0.5};
  problem.memoryBudget = 300;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan) << result.error;
  ASSERT_EQ(ends(*result.plan), (std::vector<size_t>{2, 4}));
  EXPECT_TRUE(result.plan->stages[0].recomputed);
  EXPECT_EQ(result.plan->stages[0].activationBytes, 2 * 10 + 200 + 5);
  EXPECT_DOUBLE_EQ(result.plan->stages[0].seconds, 3);
  EXPECT_FALSE(result.plan->stages[1].recomputed);
  EXPECT_EQ(result.plan->stages[1].activationBytes, 1 * (200 + 10) + 5);
  EXPECT_DOUBLE_EQ(result.plan->stages[1].seconds, 2);
  // Without a budget nothing is computed again.
  problem.memoryBudget = 0;
  result = searchStages(problem);
  ASSERT_TRUE(result.plan);
  EXPECT_FALSE(result.plan->stages[0].recomputed);
}

TEST(StageSearch, OnlyTheStageWithFewerMicrobatchesInFlightTakesTheHeavyOps) {
  // The first two ops keep 1000 bytes each. Under 1F1B (stage 0 holds 2
  // micro-batches, stage 1 one) a budget of 2100 fits them on stage 1
  // only; an even cut would put them on stage 0 (2 x 2000 > 2100).
  StageProblem problem = chain({1, 1, 1, 1}, 2, 2);
  problem.keptBytes = {0, 0, 1000, 1000};
  problem.inFlight = {2, 1};
  problem.memoryBudget = 2100;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan) << result.error;
  EXPECT_EQ(ends(*result.plan), (std::vector<size_t>{2, 4}));
  // With the heavy ops first, stage 0 cannot hold them at any cut: over
  // memory, naming stage 0 with its in-flight activations.
  problem.keptBytes = {1000, 1000, 0, 0};
  problem.forcedCuts = {2};
  result = searchStages(problem);
  EXPECT_FALSE(result.plan);
  ASSERT_TRUE(result.overMemory);
  EXPECT_EQ(result.overMemoryStage, 0u);
  EXPECT_EQ(result.overMemory->activationBytes, 2 * 2000);
}

TEST(StageSearch, StepTimeOfEachSchedule) {
  StageProblem problem = chain({1, 1, 1, 1}, 2, 4);
  std::vector<StageFigures> stages(2);
  stages[0].seconds = 3;
  stages[0].sendSeconds = 1;
  stages[1].seconds = 2;
  // Fill-drain: every stage's latency once, then M - 1 times the slowest
  // pace (the compute of stage 0, which its send overlaps).
  EXPECT_DOUBLE_EQ(stepSeconds(problem, stages), (3 + 1) + 2 + 3 * 3);
  // A send slower than the compute sets the pace.
  stages[0].sendSeconds = 5;
  EXPECT_DOUBLE_EQ(stepSeconds(problem, stages), (3 + 5) + 2 + 3 * 5);
  // Interleaved over P = 2 ranks with V = 2 stages each: (M V + P - 1) paces.
  problem.interleaved = true;
  problem.pipelineRanks = 2;
  problem.virtualStages = 2;
  EXPECT_DOUBLE_EQ(stepSeconds(problem, stages), (4 * 2 + 2 - 1) * 5.0);
}

TEST(StageSearch, BalancesEqualOps) {
  StageSearchResult result = searchStages(chain({1, 1, 1, 1}, 2, 4));
  ASSERT_TRUE(result.plan) << result.error;
  EXPECT_EQ(ends(*result.plan), (std::vector<size_t>{2, 4}));
  EXPECT_DOUBLE_EQ(result.plan->stepSeconds, 4 + 3 * 2);
}

TEST(StageSearch, CutsAtOpGranularityNotLayers) {
  // Five ops on two stages: 3 + 2 is the best split, uneven by design.
  StageSearchResult result = searchStages(chain({1, 1, 1, 1, 1}, 2, 8));
  ASSERT_TRUE(result.plan);
  std::vector<size_t> cut = ends(*result.plan);
  EXPECT_TRUE(cut == (std::vector<size_t>{2, 5}) || cut == (std::vector<size_t>{3, 5}));
  EXPECT_DOUBLE_EQ(result.plan->stepSeconds, 5 + 7 * 3);
}

TEST(StageSearch, OneMicrobatchStillBalances) {
  // With one micro-batch every cut gives the same step (the sum): the most
  // balanced plan wins, 3 | 1 1 1.
  StageSearchResult result = searchStages(chain({3, 1, 1, 1}, 2, 1));
  ASSERT_TRUE(result.plan);
  EXPECT_EQ(ends(*result.plan), (std::vector<size_t>{1, 4}));
}

TEST(StageSearch, AvoidsExpensiveSends) {
  // Cutting after op 1 sends 1000 bytes (10 s), after op 2 nothing: the
  // search pays the uneven compute (3 + 1 against 2 + 2) to save the send.
  StageProblem problem = chain({1, 1, 1, 1}, 2, 4);
  problem.crossingBytes = {0, 0, 1000, 0, 0};
  problem.crossingValues = {0, 0, 1, 0, 0};
  problem.linkBytesPerSecond = 100;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan);
  EXPECT_NE(result.plan->stages[0].end, 2u);
}

TEST(StageSearch, CutsWhereFewValuesCross) {
  // Equal bytes everywhere, but three values cross position 2 and one
  // crosses position 3: each value is a send with its latency.
  StageProblem problem = chain({1, 1, 1, 1, 1}, 2, 4);
  problem.crossingBytes = {0, 40, 40, 40, 40, 0};
  problem.crossingValues = {0, 3, 3, 1, 3, 0};
  problem.linkLatencySeconds = 1;
  problem.linkBytesPerSecond = 1e30;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan);
  EXPECT_EQ(result.plan->stages[0].end, 3u);
  EXPECT_DOUBLE_EQ(result.plan->stages[0].sendSeconds, 1);
}

TEST(StageSearch, MemoryMovesTheCut) {
  // Ops 2 and 3 each read a 60-byte weight; a stage holds 100: they cannot
  // share one, so the cut goes after op 2 although 2 | 2 would be faster.
  StageProblem problem = chain({1, 1, 1, 1}, 2, 4);
  problem.weightBytes = {60, 60};
  problem.opWeights = {{}, {}, {0}, {1}};
  problem.memoryBudget = 100;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan) << result.error;
  EXPECT_EQ(ends(*result.plan), (std::vector<size_t>{3, 4}));
  EXPECT_DOUBLE_EQ(result.plan->stepSeconds, 4 + 3 * 3);
}

TEST(StageSearch, NamesTheStageOverMemory) {
  StageProblem problem = chain({1, 1, 1, 1}, 2, 1);
  problem.weightBytes = {60, 60, 60};
  problem.opWeights = {{0}, {}, {1}, {2}};
  problem.memoryBudget = 100;
  StageSearchResult result = searchStages(problem);
  EXPECT_FALSE(result.plan);
  ASSERT_TRUE(result.overMemory);
  // The best cut ignoring memory is 1 1 | 1 1: stage 1 holds 120 bytes.
  EXPECT_EQ(result.overMemoryStage, 1u);
  EXPECT_EQ(result.overMemory->weightBytes, 120);
}

TEST(StageSearch, KeepsForcedCuts) {
  StageProblem problem = chain({1, 1, 1, 1}, 2, 4);
  problem.forcedCuts = {1};
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan);
  EXPECT_EQ(ends(*result.plan), (std::vector<size_t>{1, 4}));
  // Two forced cuts for two stages leave no plan.
  problem.forcedCuts = {1, 3};
  result = searchStages(problem);
  EXPECT_FALSE(result.plan);
  EXPECT_NE(result.error.find("forced cuts"), std::string::npos) << result.error;
}

TEST(StageSearch, CandidatesGrowByCheapestFirst) {
  // One stage wants 24 candidates: the 9 positions within 4x the cheapest
  // (10 bytes), then the 10 at 50 bytes, then the 5 cheapest of the rest
  // (100 + position bytes: the earliest ones).
  StageProblem problem = chain(std::vector<double>(60, 1), 4, 2);
  problem.stages = 1;
  problem.pipelineRanks = 1;
  for (size_t position = 1; position < 60; ++position)
    problem.crossingBytes[position] = position % 6 == 0   ? 10
                                      : position % 6 == 1 ? 50
                                                          : int64_t(100 + position);
  std::vector<size_t> candidates = candidateCuts(problem);
  size_t cheap = 0, middle = 0, dear = 0, lastDear = 0;
  for (size_t position : candidates) {
    if (position == 0 || position == 60)
      continue;
    int64_t bytes = problem.crossingBytes[position];
    if (bytes == 10)
      ++cheap;
    else if (bytes == 50)
      ++middle;
    else {
      ++dear;
      lastDear = position;
    }
  }
  EXPECT_EQ(cheap, 9u);
  EXPECT_EQ(middle, 10u);
  EXPECT_EQ(dear, 5u);
  // Positions 2-5 and 8 are the 5 cheapest of the rest.
  EXPECT_EQ(lastDear, 8u);
}

TEST(StageSearch, FinerCutsNearThePlanEvenOutAnEmbedding) {
  // An embedding (2 s), then 25 layers of twenty 1 s ops. Crossing between
  // layers is cheap (10 bytes), inside one dear (100 + its position, so
  // the dear positions the coarse candidates add are the first layer's):
  // cuts between layers
  // alone leave 242 s against 260 s (or 262 s against 240 s), 3.6% over the
  // mean stage. Near that plan's cut the search tries cuts inside layers,
  // at most 2% of a mean stage apart, and evens the stages out within that.
  std::vector<double> seconds = {2};
  seconds.resize(1 + 25 * 20, 1);
  StageProblem problem = chain(seconds, 2, 8);
  for (size_t position = 1; position < seconds.size(); ++position)
    problem.crossingBytes[position] = (position - 1) % 20 == 0 ? 10 : int64_t(100 + position);
  std::vector<size_t> coarse = candidateCuts(problem);
  for (size_t position = 242; position <= 260; ++position)
    EXPECT_EQ(std::count(coarse.begin(), coarse.end(), position), 0) << position;
  StageSearchResult result = searchStages(problem);
  ASSERT_TRUE(result.plan) << result.error;
  double mean = 502.0 / 2;
  for (const StageFigures &stage : result.plan->stages)
    EXPECT_LE(stage.seconds, mean * 1.02) << "cut at " << result.plan->stages[0].end;
  // The cut is inside a layer: a dear crossing.
  EXPECT_GT(problem.crossingBytes[result.plan->stages[0].end], 100);
}

TEST(StageSearch, RefusesMoreStagesThanOps) {
  StageSearchResult result = searchStages(chain({1, 1, 1}, 4));
  EXPECT_FALSE(result.plan);
  EXPECT_EQ(result.error, "the program has 3 ops that stages divide (weights, constants and "
                          "cheap ops of the inputs alone are copied into every stage that needs "
                          "them); it cannot be cut into 4 stages");
}

TEST(StageSearch, CandidatesPreferCheapCrossings) {
  // Few stages over many positions: the 80-byte crossings are candidates
  // only once the cheap ones are too few.
  StageProblem problem = chain(std::vector<double>(100, 1), 2, 2);
  for (size_t position = 1; position < 100; ++position)
    problem.crossingBytes[position] = position % 4 == 0 ? 10 : 80;
  std::vector<size_t> candidates = candidateCuts(problem);
  EXPECT_EQ(candidates.front(), 0u);
  EXPECT_EQ(candidates.back(), 100u);
  // 24 positions cross 10 bytes: fewer than 24 per stage, so the 80-byte
  // ones come next, all of them since they cross equally.
  EXPECT_EQ(candidates.size(), 101u);
  problem.stages = 1;
  problem.pipelineRanks = 1;
  candidates = candidateCuts(problem);
  EXPECT_EQ(candidates.size(), 24u + 2);
}

} // namespace
} // namespace shardc::pipeline
