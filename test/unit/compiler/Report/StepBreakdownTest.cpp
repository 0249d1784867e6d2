//===- StepBreakdownTest.cpp - a training pipeline's step by what it pays --===//
//
// The simulated step charges each stage's collectives with its compute (a
// recomputed stage's forward ones twice, the update's once a step), and the
// breakdown gives the busiest pp rank's seconds by kind, summing to the
// step; figures by hand.
//
//===----------------------------------------------------------------------===//
#include "compiler/Report/PipelineReport.h"

#include <gtest/gtest.h>

namespace shardc::report {
namespace {

StageReport stage(double forward, double backward, double update, bool recomputed) {
  StageReport figures;
  figures.forwardSeconds = forward;
  figures.backwardSeconds = backward;
  figures.updateSeconds = update;
  figures.forwardComm["all_reduce"] = 0.5;
  figures.backwardComm["all_reduce"] = 0.25;
  figures.updateComm["all_gather"] = 0.125;
  figures.recomputed = recomputed;
  return figures;
}

PipelineFigures pipeline(int64_t ranks, int64_t microbatches, std::vector<StageReport> stages) {
  PipelineFigures figures;
  figures.schedule = "1f1b";
  figures.training = true;
  figures.pipelineRanks = ranks;
  figures.microbatches = microbatches;
  figures.stages = std::move(stages);
  return figures;
}

TEST(StepBreakdownTest, OneRankRunsEverythingBackToBack) {
  // Per micro-batch: forward 1 + 0.5, again for the recompute, backward 2 +
  // 0.25; three micro-batches; then the update 0.1 + 0.125.
  PipelineFigures figures = pipeline(1, 3, {stage(1, 2, 0.1, true)});
  std::optional<PipelineFigures::Simulated> simulated = figures.simulate();
  ASSERT_TRUE(simulated);
  EXPECT_NEAR(simulated->stepSeconds, 3 * (1.5 + 1.5 + 2.25) + 0.225, 1e-12);
  std::optional<StepBreakdown> parts = figures.breakdown();
  ASSERT_TRUE(parts);
  EXPECT_NEAR(parts->compute, 3 * (1 + 1 + 2), 1e-12);
  EXPECT_NEAR(parts->optimizer, 0.1, 1e-12);
  EXPECT_NEAR(parts->communication["all_reduce"], 3 * (0.5 + 0.5 + 0.25), 1e-12);
  EXPECT_NEAR(parts->communication["all_gather"], 0.125, 1e-12);
  EXPECT_NEAR(parts->bubble, 0, 1e-12);
}

TEST(StepBreakdownTest, TheBusiestRanksSecondsSumToTheStep) {
  // Stage 1 computes its forward again: its rank is the busier one.
  PipelineFigures figures = pipeline(2, 4, {stage(1, 2, 0.1, false), stage(1, 2, 0.1, true)});
  std::optional<PipelineFigures::Simulated> simulated = figures.simulate();
  ASSERT_TRUE(simulated);
  EXPECT_EQ(simulated->busiestRank, 1);
  std::optional<StepBreakdown> parts = figures.breakdown();
  ASSERT_TRUE(parts);
  EXPECT_NEAR(parts->compute, 4 * (1 + 1 + 2), 1e-12);
  EXPECT_NEAR(parts->communication["all_reduce"], 4 * (0.5 + 0.5 + 0.25), 1e-12);
  double busy = parts->compute + parts->optimizer + parts->communication["all_reduce"] +
                parts->communication["all_gather"];
  EXPECT_GT(parts->bubble, 0);
  EXPECT_NEAR(busy + parts->bubble, simulated->stepSeconds, 1e-12);
  // The collectives lengthen the step: without them it is shorter.
  PipelineFigures computeOnly = figures;
  for (StageReport &each : computeOnly.stages) {
    each.forwardComm.clear();
    each.backwardComm.clear();
    each.updateComm.clear();
  }
  EXPECT_LT(computeOnly.simulate()->stepSeconds, simulated->stepSeconds - 4 * 1.25);
}

} // namespace
} // namespace shardc::report
