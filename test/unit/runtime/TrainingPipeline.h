//===- TrainingPipeline.h - a tiny training pipeline's manifest -*- C++ -*-===//
//
// The `pipeline` section of a training step cut into two stages on pp=2,
// in two micro-batches of x [2]: the manifest the plan's tests break one
// field at a time and the pipeline rank's test runs. Programs, by index:
//   0 stage 0 forward          x -> y (t0, to stage 1), x kept (t1)
//   1 stage 0 backward_input   dy (t3), x (t1) -> g (t4)
//   2 stage 0 backward_weight  g (t4) -> (accumulates the gradient)
//   3 stage 0 update level 0   -> n (t5, to stage 1, once per step)
//   4 stage 1 forward          y (t0) -> y kept (t2) (accumulates the loss)
//   5 stage 1 backward_input   y (t2) -> dy (t3, to stage 0)
//   6 stage 1 update level 0   -> loss
//   7 stage 1 update level 1   n (t5) -> grad_norm
// Transfers t1, t2 and t4 stay on their rank. The action lists run 1F1B's
// order: each micro-batch's backward as soon as its forward is done.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_RUNTIME_TRAININGPIPELINE_H
#define SHARDC_TEST_UNIT_RUNTIME_TRAININGPIPELINE_H

#include "runtime/core/Mesh.h"
#include "runtime/core/Tensor.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace shardc::rt::test {

const MeshShape kTrainingMesh({"pp"}, {2});
const std::vector<TensorSignature> kTrainingInputs = {{"x", DType::F32, {2}}};
const std::vector<TensorSignature> kTrainingOutputs = {{"loss", DType::F32, {}},
                                                       {"grad_norm", DType::F32, {}}};

/// The manifest's "training" object for kTrainingOutputs.
inline nlohmann::json trainingSection() {
  return {{"loss", "loss"},
          {"grad_norm", "grad_norm"},
          {"optimizer", {{"name", "sgd"}}},
          {"batch_inputs", {"x"}}};
}

inline nlohmann::json trainingPipelineSection() {
  return nlohmann::json::parse(R"({
    "stages": 2, "microbatches": 2, "virtual_stages": 1, "schedule": "1f1b",
    "inputs": [{"name": "x", "microbatch_dim": 0}],
    "outputs": [{"name": "loss", "microbatch_dim": null},
                {"name": "grad_norm", "microbatch_dim": null}],
    "transfers": [
      {"id": 0, "from": 0, "to": 1, "dtype": "float32", "shape": [1]},
      {"id": 1, "from": 0, "to": 0, "dtype": "float32", "shape": [1]},
      {"id": 2, "from": 1, "to": 1, "dtype": "float32", "shape": [1]},
      {"id": 3, "from": 1, "to": 0, "dtype": "float32", "shape": [1]},
      {"id": 4, "from": 0, "to": 0, "dtype": "float32", "shape": [1]},
      {"id": 5, "from": 0, "to": 1, "dtype": "float32", "shape": []}],
    "programs": [
      {"stage": 0, "part": "forward",
       "inputs": [{"name": "x", "dtype": "float32", "shape": [1]}],
       "outputs": [{"name": "y", "dtype": "float32", "shape": [1], "transfer": 0},
                   {"name": "saved_x", "dtype": "float32", "shape": [1], "transfer": 1}]},
      {"stage": 0, "part": "backward_input",
       "inputs": [{"name": "dy", "dtype": "float32", "shape": [1], "transfer": 3},
                  {"name": "saved_x", "dtype": "float32", "shape": [1], "transfer": 1}],
       "outputs": [{"name": "g", "dtype": "float32", "shape": [1], "transfer": 4}]},
      {"stage": 0, "part": "backward_weight",
       "inputs": [{"name": "g", "dtype": "float32", "shape": [1], "transfer": 4}],
       "outputs": []},
      {"stage": 0, "part": "update", "level": 0, "inputs": [],
       "outputs": [{"name": "n", "dtype": "float32", "shape": [], "transfer": 5}]},
      {"stage": 1,
       "inputs": [{"name": "y", "dtype": "float32", "shape": [1], "transfer": 0}],
       "outputs": [{"name": "saved_y", "dtype": "float32", "shape": [1], "transfer": 2}]},
      {"stage": 1, "part": "backward_input",
       "inputs": [{"name": "saved_y", "dtype": "float32", "shape": [1], "transfer": 2}],
       "outputs": [{"name": "dy", "dtype": "float32", "shape": [1], "transfer": 3}]},
      {"stage": 1, "part": "update", "level": 0, "inputs": [],
       "outputs": [{"name": "loss", "dtype": "float32", "shape": []}]},
      {"stage": 1, "part": "update", "level": 1,
       "inputs": [{"name": "n", "dtype": "float32", "shape": [], "transfer": 5}],
       "outputs": [{"name": "grad_norm", "dtype": "float32", "shape": []}]}],
    "actions": [
      [{"op": "forward", "stage": 0, "microbatch": 0},
       {"op": "send", "transfer": 0, "microbatch": 0},
       {"op": "forward", "stage": 0, "microbatch": 1},
       {"op": "send", "transfer": 0, "microbatch": 1},
       {"op": "recv", "transfer": 3, "microbatch": 0},
       {"op": "backward_input", "stage": 0, "microbatch": 0},
       {"op": "backward_weight", "stage": 0, "microbatch": 0},
       {"op": "recv", "transfer": 3, "microbatch": 1},
       {"op": "backward_input", "stage": 0, "microbatch": 1},
       {"op": "backward_weight", "stage": 0, "microbatch": 1},
       {"op": "update", "stage": 0, "level": 0},
       {"op": "send", "transfer": 5, "microbatch": 0}],
      [{"op": "recv", "transfer": 0, "microbatch": 0},
       {"op": "forward", "stage": 1, "microbatch": 0},
       {"op": "backward_input", "stage": 1, "microbatch": 0},
       {"op": "send", "transfer": 3, "microbatch": 0},
       {"op": "recv", "transfer": 0, "microbatch": 1},
       {"op": "forward", "stage": 1, "microbatch": 1},
       {"op": "backward_input", "stage": 1, "microbatch": 1},
       {"op": "send", "transfer": 3, "microbatch": 1},
       {"op": "update", "stage": 1, "level": 0},
       {"op": "recv", "transfer": 5, "microbatch": 0},
       {"op": "update", "stage": 1, "level": 1}]],
    "output_rank": 1})");
}

} // namespace shardc::rt::test

#endif
