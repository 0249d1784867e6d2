//===- TrainingSpec.cpp - a training artifact's manifest section ----------===//
#include "runtime/core/TrainingSpec.h"

#include "runtime/io/ErrorText.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace shardc::rt {
namespace {

/// A bad value of the training object: the key and what is wrong.
struct KeyError {
  std::string key, message;
};

std::string quoted(const std::string &name) { return "'" + io::printable(name) + "'"; }

/// "'a', 'b'" for messages.
std::string namesOf(const std::vector<TensorSignature> &tensors) {
  std::string names;
  for (const TensorSignature &tensor : tensors)
    names += (names.empty() ? "" : ", ") + quoted(tensor.name);
  return names.empty() ? "none" : names;
}

const nlohmann::json &member(const nlohmann::json &training, const std::string &key) {
  if (!training.contains(key))
    throw KeyError{key, "missing"};
  return training.at(key);
}

std::string stringOf(const nlohmann::json &value, const std::string &key) {
  if (!value.is_string())
    throw KeyError{key, std::string("expected a string, got ") + value.type_name()};
  return value.get<std::string>();
}

/// The output `key` names: a float32 scalar of the manifest's outputs.
size_t scalarOutput(const nlohmann::json &training, const std::string &key,
                    const std::vector<TensorSignature> &outputs) {
  const std::string name = stringOf(member(training, key), key);
  auto found = std::find_if(outputs.begin(), outputs.end(),
                            [&](const TensorSignature &output) { return output.name == name; });
  if (found == outputs.end())
    throw KeyError{key, quoted(name) + " is not an output of the artifact (its outputs: " +
                            namesOf(outputs) + ")"};
  if (found->dtype != DType::F32 || !found->shape.empty())
    throw KeyError{key, quoted(name) + " is " + dtypeName(found->dtype) + " " +
                            formatShape(found->shape) + "; expected a float32 scalar"};
  return static_cast<size_t>(found - outputs.begin());
}

/// Steps cut a batch input's rows by its dim 0, so it needs one.
void checkBatchInput(const TensorSignature &input, const std::string &what) {
  if (input.shape.empty() || input.shape[0] < 1)
    throw KeyError{"batch_inputs", what + " is " + dtypeName(input.dtype) + " " +
                                       formatShape(input.shape) +
                                       "; a batch input needs a dim 0 of at least 1"};
}

TrainingSpec parse(const nlohmann::json &training, const std::vector<TensorSignature> &inputs,
                   const std::vector<TensorSignature> &outputs) {
  TrainingSpec spec;
  spec.lossOutput = scalarOutput(training, "loss", outputs);
  spec.loss = outputs[spec.lossOutput].name;
  spec.gradNormOutput = scalarOutput(training, "grad_norm", outputs);
  spec.gradNorm = outputs[spec.gradNormOutput].name;
  const nlohmann::json &optimizer = member(training, "optimizer");
  if (!optimizer.is_object())
    throw KeyError{"optimizer", std::string("expected an object, got ") + optimizer.type_name()};
  spec.optimizer = optimizer.dump();
  const nlohmann::json &batch = member(training, "batch_inputs");
  if (!batch.is_array())
    throw KeyError{"batch_inputs",
                   std::string("expected an array of input names, got ") + batch.type_name()};
  auto inputNamed = [&](const std::string &name) {
    return std::find_if(inputs.begin(), inputs.end(),
                        [&](const TensorSignature &input) { return input.name == name; });
  };
  for (const nlohmann::json &entry : batch) {
    const std::string name = stringOf(entry, "batch_inputs");
    auto input = inputNamed(name);
    if (input == inputs.end())
      throw KeyError{"batch_inputs", quoted(name) +
                                         " is not an input of the artifact (its "
                                         "inputs: " +
                                         namesOf(inputs) + ")"};
    if (spec.isBatchInput(name))
      throw KeyError{"batch_inputs", quoted(name) + " is listed twice"};
    checkBatchInput(*input, quoted(name));
    spec.batchInputs.push_back(name);
  }
  for (const char *name : kLossInputs) {
    auto input = inputNamed(name);
    if (input == inputs.end() || spec.isBatchInput(name))
      continue;
    checkBatchInput(*input, quoted(name) + " (the loss's input)");
    spec.batchInputs.push_back(name);
  }
  return spec;
}

} // namespace

bool TrainingSpec::isBatchInput(const std::string &input) const {
  return std::find(batchInputs.begin(), batchInputs.end(), input) != batchInputs.end();
}

StatusOr<std::optional<TrainingSpec>> parseTrainingSpec(const nlohmann::json &manifest,
                                                        const std::vector<TensorSignature> &inputs,
                                                        const std::vector<TensorSignature> &outputs,
                                                        const std::string &manifestPath) {
  if (!manifest.contains("training"))
    return std::optional<TrainingSpec>();
  const nlohmann::json &training = manifest.at("training");
  if (!training.is_object())
    return Status::error(manifestPath + ": training: expected an object, got " +
                         training.type_name());
  try {
    return std::optional<TrainingSpec>(parse(training, inputs, outputs));
  } catch (const KeyError &error) {
    return Status::error(manifestPath + ": training." + error.key + ": " + error.message);
  }
}

} // namespace shardc::rt
