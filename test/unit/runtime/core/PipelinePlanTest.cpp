//===- PipelinePlanTest.cpp - a pipeline manifest checked field by field ----===//
//
// A valid pp=2 manifest, then one broken field at a time: each is refused
// with one line naming the manifest and the field.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/PipelinePlan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

namespace shardc::rt {
namespace {

using nlohmann::json;

const MeshShape kMesh({"pp", "tp"}, {2, 2});
const std::vector<TensorSignature> kInputs = {{"ids", DType::I64, {4, 16}},
                                              {"table", DType::F32, {16, 8}}};
const std::vector<TensorSignature> kOutputs = {{"logits", DType::F32, {4, 16, 32}}};

/// Two stages, two micro-batches of a batch of 4: stage 0 takes ids and the
/// whole table and sends transfer 0; stage 1 gives the logits.
json manifest() {
  return json::parse(R"({"pipeline": {
    "stages": 2, "microbatches": 2, "virtual_stages": 1, "schedule": "gpipe",
    "inputs": [{"name": "ids", "microbatch_dim": 0}, {"name": "table", "microbatch_dim": null}],
    "outputs": [{"name": "logits", "microbatch_dim": 0}],
    "transfers": [{"id": 0, "from": 0, "to": 1, "dtype": "float32", "shape": [2, 16, 8]}],
    "programs": [
      {"stage": 0,
       "inputs": [{"name": "ids", "dtype": "int64", "shape": [2, 16]},
                  {"name": "table", "dtype": "float32", "shape": [16, 8]}],
       "outputs": [{"name": "h", "dtype": "float32", "shape": [2, 16, 8], "transfer": 0}]},
      {"stage": 1,
       "inputs": [{"name": "h", "dtype": "float32", "shape": [2, 16, 8], "transfer": 0}],
       "outputs": [{"name": "logits", "dtype": "float32", "shape": [2, 16, 32]}]}],
    "actions": [
      [{"op": "forward", "stage": 0, "microbatch": 0}, {"op": "send", "transfer": 0, "microbatch": 0},
       {"op": "forward", "stage": 0, "microbatch": 1}, {"op": "send", "transfer": 0, "microbatch": 1}],
      [{"op": "recv", "transfer": 0, "microbatch": 0}, {"op": "forward", "stage": 1, "microbatch": 0},
       {"op": "recv", "transfer": 0, "microbatch": 1}, {"op": "forward", "stage": 1, "microbatch": 1}]],
    "output_rank": 2}})");
}

StatusOr<PipelinePlan> parse(const json &document) {
  return parsePipelinePlan(document, kMesh, kInputs, kOutputs, "out/manifest.json");
}

TEST(PipelinePlan, ReadsAValidManifest) {
  auto plan = parse(manifest());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->stages, 2);
  EXPECT_EQ(plan->ppSize, 2);
  EXPECT_EQ(plan->ppAxis, 0);
  EXPECT_EQ(plan->inputDims[0], std::optional<int>(0));
  EXPECT_EQ(plan->inputDims[1], std::nullopt);
  EXPECT_EQ(plan->programs[0].inputs[1].caller, 1);
  EXPECT_EQ(plan->programs[0].outputs[0].transfer, 0);
  EXPECT_EQ(plan->programs[1].outputs[0].caller, 0);
  ASSERT_EQ(plan->actions[1].size(), 4u);
  EXPECT_EQ(plan->actions[1][0].op, PipelineAction::Op::Recv);
  EXPECT_EQ(plan->actions[1][3].stage, 1);
  EXPECT_EQ(plan->outputRank, 2);
  EXPECT_EQ(plan->stagesAt(1), std::vector<int>{1});
}

struct Broken {
  const char *what;
  std::function<void(json &)> edit;
  const char *error;
};

class PipelinePlanErrors : public ::testing::TestWithParam<Broken> {};

TEST_P(PipelinePlanErrors, NamesTheManifestAndTheField) {
  json document = manifest();
  GetParam().edit(document["pipeline"]);
  auto plan = parse(document);
  ASSERT_FALSE(plan.ok()) << GetParam().what;
  EXPECT_EQ(plan.status().message(), std::string("out/manifest.json: ") + GetParam().error);
  EXPECT_EQ(plan.status().message().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PipelinePlanErrors,
    ::testing::Values(
        Broken{"stages", [](json &p) { p["stages"] = 3; },
               "pipeline.stages: 3 is not pp (2) x virtual_stages (1)"},
        Broken{"missing", [](json &p) { p.erase("microbatches"); },
               "pipeline.microbatches: is missing"},
        Broken{"float count", [](json &p) { p["microbatches"] = 2.5; },
               "pipeline.microbatches: expected an integer, got number"},
        Broken{"huge count", [](json &p) { p["microbatches"] = 18446744073709551615ull; },
               "pipeline.microbatches: is out of range"},
        Broken{"unknown input", [](json &p) { p["inputs"][0]["name"] = "tokens"; },
               "pipeline.inputs[0].name: 'tokens' is not one of the manifest's tensors"},
        Broken{"input listed twice", [](json &p) { p["inputs"][1]["name"] = "ids"; },
               "pipeline.inputs[1].name: 'ids' is listed twice"},
        Broken{"dim past the rank", [](json &p) { p["inputs"][0]["microbatch_dim"] = 2; },
               "pipeline.inputs[0].microbatch_dim: 2 is out of range [0, 1]"},
        Broken{"dim not dividing", [](json &p) { p["microbatches"] = 3; },
               "pipeline.inputs[0].microbatch_dim: dimension 0 of 'ids' (4) does not divide "
               "into 3 micro-batches"},
        Broken{"output not listed", [](json &p) { p["outputs"] = json::array(); },
               "pipeline.outputs: does not list 'logits'"},
        Broken{"transfer id", [](json &p) { p["transfers"][0]["id"] = 1; },
               "pipeline.transfers[0].id: 1 is out of range [0, 0]"},
        Broken{"transfer to an unknown stage", [](json &p) { p["transfers"][0]["to"] = 5; },
               "pipeline.transfers[0].to: 5 is out of range [0, 1]"},
        Broken{"transfer to itself", [](json &p) { p["transfers"][0]["to"] = 0; },
               "pipeline.transfers[0].to: a transfer goes from one stage to another, not to "
               "itself"},
        Broken{"negative dim", [](json &p) { p["transfers"][0]["shape"][1] = -16; },
               "pipeline.transfers[0].shape[1]: -16 is out of range [0, 9223372036854775807]"},
        Broken{"overflowing shape",
               [](json &p) {
                 p["transfers"][0]["shape"] = {1ll << 40, 1ll << 30};
               },
               "pipeline.transfers[0].shape: holds more bytes than fit in 64 bits"},
        Broken{"unknown dtype", [](json &p) { p["transfers"][0]["dtype"] = "float8"; },
               "pipeline.transfers[0].dtype: unknown dtype 'float8'"},
        Broken{"program count", [](json &p) { p["programs"].erase(1); },
               "pipeline.programs: lists 1 program(s) for 2 stage(s)"},
        Broken{"program out of order", [](json &p) { p["programs"][0]["stage"] = 1; },
               "pipeline.programs[0].stage: 1 is out of range [0, 0]"},
        Broken{"transfer id out of range",
               [](json &p) { p["programs"][1]["inputs"][0]["transfer"] = 7; },
               "pipeline.programs[1].inputs[0].transfer: 7 is out of range [0, 0]"},
        Broken{"transfer into the wrong stage",
               [](json &p) { p["programs"][0]["inputs"].push_back(p["programs"][1]["inputs"][0]); },
               "pipeline.programs[0].inputs[2].transfer: transfer 0 goes from stage 0 to stage "
               "1, not to stage 0"},
        Broken{"transfer of another shape",
               [](json &p) {
                 p["programs"][1]["inputs"][0]["shape"] = {4, 16, 8};
               },
               "pipeline.programs[1].inputs[0]: is float32 [4, 16, 8]; transfer 0 is float32 "
               "[2, 16, 8]"},
        Broken{"whole input where a micro-batch is due",
               [](json &p) {
                 p["programs"][0]["inputs"][0]["shape"] = {4, 16};
               },
               "pipeline.programs[0].inputs[0]: is int64 [4, 16]; a micro-batch of 'ids' is "
               "int64 [2, 16]"},
        Broken{"unknown stage input",
               [](json &p) { p["programs"][0]["inputs"][0]["name"] = "mask"; },
               "pipeline.programs[0].inputs[0].name: 'mask' is neither a transfer nor one of "
               "the manifest's inputs"},
        Broken{
            "output twice",
            [](json &p) { p["programs"][0]["outputs"].push_back(p["programs"][1]["outputs"][0]); },
            "pipeline.programs[1].outputs: 'logits' is already produced by stage 0"},
        Broken{"output never produced",
               [](json &p) { p["programs"][1]["outputs"] = json::array(); },
               "pipeline.programs: no stage produces the output 'logits'"},
        Broken{"action lists", [](json &p) { p["actions"].erase(1); },
               "pipeline.actions: lists 1 action list(s); the mesh has pp=2"},
        Broken{"forward of another coordinate's stage",
               [](json &p) { p["actions"][0][0]["stage"] = 1; },
               "pipeline.actions[0][0].stage: stage 1 is not held by pp 0"},
        Broken{"unknown stage", [](json &p) { p["actions"][0][0]["stage"] = 9; },
               "pipeline.actions[0][0].stage: 9 is out of range [0, 1]"},
        Broken{"microbatch out of range", [](json &p) { p["actions"][1][2]["microbatch"] = 2; },
               "pipeline.actions[1][2].microbatch: 2 is out of range [0, 1]"},
        Broken{"send by the receiver", [](json &p) { p["actions"][1][0]["op"] = "send"; },
               "pipeline.actions[1][0].transfer: transfer 0 is sent by stage 0, not held by pp 1"},
        Broken{"unknown op", [](json &p) { p["actions"][1][0]["op"] = "wait"; },
               "pipeline.actions[1][0].op: 'wait': expected forward, send or recv"},
        Broken{"backward", [](json &p) { p["actions"][1][1]["op"] = "backward_weight"; },
               "pipeline.actions[1][1].op: 'backward_weight' is a training action, and the "
               "manifest has no training section"},
        Broken{"output rank out of range", [](json &p) { p["output_rank"] = 4; },
               "pipeline.output_rank: 4 is out of range [0, 3]"},
        Broken{"output rank without the outputs", [](json &p) { p["output_rank"] = 1; },
               "pipeline.output_rank: rank 1 is at pp 0 but stage 1 produces 'logits'"},
        Broken{"micro-batch index of another type",
               [](json &p) {
                 p["programs"][1]["inputs"].push_back(
                     {{"name", "mb"}, {"dtype", "int32"}, {"shape", {1}}, {"microbatch_index", true}});
               },
               "pipeline.programs[1].inputs[1]: is int32 [1]; the micro-batch index is int64 [1]"},
        Broken{"micro-batch index as an output",
               [](json &p) {
                 p["programs"][1]["outputs"].push_back(
                     {{"name", "mb"}, {"dtype", "int64"}, {"shape", {1}}, {"microbatch_index", true}});
               },
               "pipeline.programs[1].outputs[1].microbatch_index: the micro-batch index is an "
               "input, not an output"},
        Broken{"not an object", [](json &p) { p["programs"][0] = 3; },
               "pipeline.programs[0]: expected an object"},
        Broken{"a training program",
               [](json &p) {
                 p["programs"][1]["part"] = "update";
                 p["programs"][1]["level"] = 0;
               },
               "pipeline.programs[1].part: 'update' is a training program, and the manifest has "
               "no training section"},
        Broken{"read before received",
               [](json &p) { std::swap(p["actions"][1][0], p["actions"][1][1]); },
               "pipeline.actions[1][0]: stage 1, micro-batch 0 reads transfer 0, micro-batch 0 "
               "before it is received"},
        Broken{"a micro-batch never run", [](json &p) { p["actions"][1].erase(3); },
               "pipeline.actions[1]: never runs stage 1 on micro-batch 1"}));

TEST(PipelinePlan, ReadsTheMicrobatchIndex) {
  json document = manifest();
  document["pipeline"]["programs"][1]["inputs"].push_back(
      {{"name", "microbatch"}, {"dtype", "int64"}, {"shape", {1}}, {"microbatch_index", true}});
  auto plan = parse(document);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->programs[1].inputs[1].microbatchIndex);
  EXPECT_EQ(plan->programs[1].inputs[1].caller, -1);
}

TEST(PipelinePlan, NeedsAPipelineAxis) {
  auto plan = parsePipelinePlan(manifest(), MeshShape({"tp"}, {4}), kInputs, kOutputs, "m.json");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(), "m.json: mesh: has no 'pp' axis, which a pipeline needs");
}

} // namespace
} // namespace shardc::rt
