//===- TrainingSpecTest.cpp - a training artifact's manifest section -------===//
#include "runtime/core/TrainingSpec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace shardc::rt {
namespace {

const std::vector<TensorSignature> kInputs = {{"input_ids", DType::I64, {4, 8}},
                                              {"labels", DType::I64, {4, 8}},
                                              {"mask", DType::Bool, {8}},
                                              {"scale", DType::F32, {}}};
const std::vector<TensorSignature> kOutputs = {
    {"loss", DType::F32, {}}, {"grad_norm", DType::F32, {}}, {"logits", DType::F32, {4, 8, 16}}};

StatusOr<std::optional<TrainingSpec>> parse(const nlohmann::json &training) {
  return parseTrainingSpec({{"training", training}}, kInputs, kOutputs, "m.json");
}

nlohmann::json good() {
  return {{"loss", "loss"},
          {"grad_norm", "grad_norm"},
          {"optimizer", {{"name", "adamw"}, {"lr", 0.001}}},
          {"batch_inputs", {"input_ids", "mask"}}};
}

TEST(TrainingSpecTest, ReadsTheOutputsAndTheBatchInputs) {
  auto spec = parse(good());
  ASSERT_TRUE(spec.ok()) << spec.message();
  ASSERT_TRUE(spec->has_value());
  const TrainingSpec &training = **spec;
  EXPECT_EQ(training.lossOutput, 0u);
  EXPECT_EQ(training.gradNormOutput, 1u);
  EXPECT_EQ(training.optimizer, R"({"lr":0.001,"name":"adamw"})");
  // labels is the loss's input: a batch input though not listed.
  EXPECT_EQ(training.batchInputs, (std::vector<std::string>{"input_ids", "mask", "labels"}));
  EXPECT_TRUE(training.isBatchInput("labels"));
  EXPECT_FALSE(training.isBatchInput("scale"));
}

TEST(TrainingSpecTest, WithoutTrainingTheArtifactIsAnInferenceOne) {
  auto spec = parseTrainingSpec({{"inputs", nlohmann::json::array()}}, kInputs, kOutputs, "m.json");
  ASSERT_TRUE(spec.ok()) << spec.message();
  EXPECT_FALSE(spec->has_value());
}

TEST(TrainingSpecTest, ABadValueNamesItsKey) {
  auto with = [](const char *key, nlohmann::json value) {
    nlohmann::json training = good();
    if (value.is_discarded())
      training.erase(key);
    else
      training[key] = std::move(value);
    return training;
  };
  const nlohmann::json removed = nlohmann::json::value_t::discarded;
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {nlohmann::json::array(), "training: expected an object, got array"},
      {with("loss", removed), "training.loss: missing"},
      {with("loss", 3), "training.loss: expected a string, got number"},
      {with("loss", "lost"), "training.loss: 'lost' is not an output of the artifact (its "
                             "outputs: 'loss', 'grad_norm', 'logits')"},
      {with("grad_norm", "logits"),
       "training.grad_norm: 'logits' is float32 [4, 8, 16]; expected a float32 scalar"},
      {with("optimizer", "adam"), "training.optimizer: expected an object, got string"},
      {with("batch_inputs", removed), "training.batch_inputs: missing"},
      {with("batch_inputs", "input_ids"),
       "training.batch_inputs: expected an array of input names, got string"},
      {with("batch_inputs", {"input_ids", "nope"}),
       "training.batch_inputs: 'nope' is not an input of the artifact (its inputs: 'input_ids', "
       "'labels', 'mask', 'scale')"},
      {with("batch_inputs", {"input_ids", "input_ids"}),
       "training.batch_inputs: 'input_ids' is listed twice"},
      {with("batch_inputs", {"scale"}),
       "training.batch_inputs: 'scale' is float32 []; a batch input needs a dim 0 of at least 1"},
      {with("batch_inputs", {1}), "training.batch_inputs: expected a string, got number"}};
  for (const auto &[training, message] : cases) {
    auto spec = parse(training);
    EXPECT_EQ(spec.message(), "m.json: " + message) << training.dump();
  }
}

} // namespace
} // namespace shardc::rt
