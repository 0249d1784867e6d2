//===- TrainingPipelinePlanTest.cpp - a training pipeline's manifest checked -===//
//
// The two-stage training step of TrainingPipeline.h (forward, backward and
// update programs, transfers kept on their rank, update levels), then one
// broken rule at a time: each is refused with one line naming the manifest
// and the field.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/PipelinePlan.h"
#include "test/unit/runtime/TrainingPipeline.h"

#include <gtest/gtest.h>

#include <functional>

namespace shardc::rt {
namespace {

using nlohmann::json;

json manifest() {
  return {{"pipeline", test::trainingPipelineSection()}, {"training", test::trainingSection()}};
}

StatusOr<PipelinePlan> parse(const json &document) {
  return parsePipelinePlan(document, test::kTrainingMesh, test::kTrainingInputs,
                           test::kTrainingOutputs, "out/manifest.json");
}

TEST(TrainingPipelinePlan, ReadsProgramsByPartAndLevel) {
  auto plan = parse(manifest());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->training);
  ASSERT_EQ(plan->programs.size(), 8u);
  EXPECT_EQ(plan->programs[2].part, ProgramPart::BackwardWeight);
  EXPECT_EQ(plan->programs[3].part, ProgramPart::Update);
  EXPECT_EQ(plan->programs[7].level, 1);
  EXPECT_EQ(plan->programsAt(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan->programOf(1, ProgramPart::Update, 1), 7);
  EXPECT_EQ(plan->programOf(1, ProgramPart::BackwardWeight), -1);
  EXPECT_EQ(plan->programName(4), "stage 1");
  EXPECT_EQ(plan->programName(1), "stage 0 backward_input");
  EXPECT_EQ(plan->programName(7), "stage 1 update level 1");
  // Each transfer's one producer and one consumer; t1 stays on pp 0.
  EXPECT_EQ(plan->transfers[1].producer, 0);
  EXPECT_EQ(plan->transfers[1].consumer, 1);
  EXPECT_EQ(plan->transfers[5].producer, 3);
  EXPECT_EQ(plan->transfers[5].consumer, 7);
  EXPECT_TRUE(plan->staysOnRank(1));
  EXPECT_FALSE(plan->staysOnRank(3));
  const PipelineAction &weight = plan->actions[0][6];
  EXPECT_EQ(weight.op, PipelineAction::Op::BackwardWeight);
  EXPECT_EQ(weight.program, 2);
  const PipelineAction &update = plan->actions[1][10];
  EXPECT_EQ(update.op, PipelineAction::Op::Update);
  EXPECT_EQ(update.program, 7);
  EXPECT_EQ(update.level, 1);
  EXPECT_EQ(update.microbatch, 0);
}

TEST(TrainingPipelinePlan, WithoutATrainingSectionATransferMayNotStayOnItsStage) {
  json document = manifest();
  document.erase("training");
  auto plan = parse(document);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(), "out/manifest.json: pipeline.transfers[1].to: a transfer "
                                     "goes from one stage to another, not to itself");
}

struct Broken {
  const char *what;
  std::function<void(json &)> edit;
  const char *error;
};

class TrainingPipelinePlanErrors : public ::testing::TestWithParam<Broken> {};

TEST_P(TrainingPipelinePlanErrors, NamesTheManifestAndTheField) {
  json document = manifest();
  GetParam().edit(document["pipeline"]);
  auto plan = parse(document);
  ASSERT_FALSE(plan.ok()) << GetParam().what;
  EXPECT_EQ(plan.status().message(), std::string("out/manifest.json: ") + GetParam().error);
  EXPECT_EQ(plan.status().message().find('\n'), std::string::npos);
}

/// `list[a]` and `list[b]` trade places.
void swap(json &list, size_t a, size_t b) { std::swap(list[a], list[b]); }

const json kTransfer5 = {
    {"name", "n"}, {"dtype", "float32"}, {"shape", json::array()}, {"transfer", 5}};

INSTANTIATE_TEST_SUITE_P(
    Rules, TrainingPipelinePlanErrors,
    ::testing::Values(
        // Programs: parts, levels, order.
        Broken{"unknown part", [](json &p) { p["programs"][1]["part"] = "backward"; },
               "pipeline.programs[1].part: 'backward': expected forward, backward_input, "
               "backward_weight or update"},
        Broken{"level of a forward", [](json &p) { p["programs"][0]["level"] = 0; },
               "pipeline.programs[0].level: only update programs have a level"},
        Broken{"update without a level", [](json &p) { p["programs"][3].erase("level"); },
               "pipeline.programs[3].level: is missing"},
        Broken{"part twice", [](json &p) { p["programs"][2] = p["programs"][1]; },
               "pipeline.programs[2]: stage 0 backward_input is listed twice"},
        Broken{"parts out of order", [](json &p) { swap(p["programs"], 1, 2); },
               "pipeline.programs[2]: stage 0 backward_input comes after stage 0 "
               "backward_weight; programs are sorted by stage, part and level"},
        Broken{"level skipped", [](json &p) { p["programs"][7]["level"] = 2; },
               "pipeline.programs[7].level: 2; expected 1 (a stage's update levels count from 0 "
               "without gaps)"},
        Broken{"levels not from 0",
               [](json &p) {
                 p["programs"][6]["level"] = 1;
                 p["programs"][7]["level"] = 2;
               },
               "pipeline.programs[6].level: 1; expected 0 (a stage's update levels count from 0 "
               "without gaps)"},
        Broken{"no forward", [](json &p) { p["programs"].erase(4); },
               "pipeline.programs: stage 1 has no forward program"},
        Broken{"no backward_input", [](json &p) { p["programs"].erase(5); },
               "pipeline.programs: stage 1 has no backward_input program"},
        Broken{"no update", [](json &p) { p["programs"].erase(3); },
               "pipeline.programs: stage 0 has no update program"},
        // Transfers: one producer, one consumer, both per micro-batch or per step.
        Broken{"two producers",
               [](json &p) {
                 p["programs"][1]["outputs"].push_back(
                     {{"name", "x2"}, {"dtype", "float32"}, {"shape", {1}}, {"transfer", 1}});
               },
               "pipeline.programs[1].outputs[1].transfer: transfer 1 is already an output of "
               "stage 0"},
        Broken{"no consumer", [](json &p) { p["programs"][2]["inputs"] = json::array(); },
               "pipeline.transfers[4]: no program lists it among its inputs"},
        Broken{"from an update to a forward",
               [](json &p) {
                 p["programs"][7]["inputs"] = json::array();
                 p["programs"][4]["inputs"].push_back(kTransfer5);
               },
               "pipeline.transfers[5]: goes from stage 0 update level 0 to stage 1: an update "
               "runs once per step, the other parts once per micro-batch"},
        Broken{
            "an update given a micro-batch",
            [](json &p) {
              p["programs"][3]["inputs"] = {{{"name", "x"}, {"dtype", "float32"}, {"shape", {1}}}};
            },
            "pipeline.programs[3].inputs[0]: is float32 [1]; 'x' is float32 [2]"},
        // Actions.
        Broken{"unknown op", [](json &p) { p["actions"][1][0]["op"] = "wait"; },
               "pipeline.actions[1][0].op: 'wait': expected forward, backward_input, "
               "backward_weight, update, send or recv"},
        Broken{"no such program", [](json &p) { p["actions"][1][2]["op"] = "backward_weight"; },
               "pipeline.actions[1][2].stage: stage 1 has no backward_weight program"},
        Broken{"no such level", [](json &p) { p["actions"][0][10]["level"] = 1; },
               "pipeline.actions[0][10].level: stage 0 has no update program of level 1"},
        Broken{"an update on a micro-batch", [](json &p) { p["actions"][0][10]["microbatch"] = 1; },
               "pipeline.actions[0][10].microbatch: 1 is out of range [0, 0]"},
        Broken{"a per-step transfer on a micro-batch",
               [](json &p) { p["actions"][0][11]["microbatch"] = 1; },
               "pipeline.actions[0][11].microbatch: 1 is out of range [0, 0]"},
        Broken{"a kept value sent",
               [](json &p) {
                 p["actions"][0][1] = {{"op", "send"}, {"transfer", 1}, {"microbatch", 0}};
               },
               "pipeline.actions[0][1].transfer: transfer 1 goes from stage 0 to stage 0 on pp 0: "
               "it stays there, unsent"},
        // The order of a list, run on paper.
        Broken{"read before received", [](json &p) { swap(p["actions"][0], 4, 5); },
               "pipeline.actions[0][4]: stage 0 backward_input, micro-batch 0 reads transfer 3, "
               "micro-batch 0 before it is received"},
        Broken{"read before produced", [](json &p) { swap(p["actions"][0], 5, 6); },
               "pipeline.actions[0][5]: stage 0 backward_weight, micro-batch 0 reads transfer 4, "
               "micro-batch 0 before it is produced by stage 0 backward_input"},
        Broken{"sent before produced", [](json &p) { swap(p["actions"][0], 0, 1); },
               "pipeline.actions[0][0]: sends transfer 0, micro-batch 0 before stage 0 produces "
               "it"},
        Broken{"received twice", [](json &p) { p["actions"][1][4]["microbatch"] = 0; },
               "pipeline.actions[1][4]: receives transfer 0, micro-batch 0 a second time"},
        Broken{"run twice", [](json &p) { p["actions"][0][8]["microbatch"] = 0; },
               "pipeline.actions[0][8]: stage 0 backward_input, micro-batch 0 already ran at "
               "pipeline.actions[0][5]"},
        Broken{"a micro-batch never run", [](json &p) { p["actions"][0].erase(9); },
               "pipeline.actions[0]: never runs stage 0 backward_weight on micro-batch 1"},
        Broken{"an update never run", [](json &p) { p["actions"][1].erase(10); },
               "pipeline.actions[1]: never runs stage 1 update level 1"},
        Broken{"never sent", [](json &p) { p["actions"][0].erase(11); },
               "pipeline.actions[0]: never sends transfer 5, micro-batch 0"}));

} // namespace
} // namespace shardc::rt
