//===- TrainingSpec.h - a training artifact's manifest section --*- C++ -*-===//
//
// A training artifact (docs/training.md) runs one training step per run:
// its manifest's optional "training" object says which outputs are the loss
// and the gradients' norm, which optimizer the step applies, and which
// inputs are the batch that changes from step to step:
//
//   "training": {"loss": "loss", "grad_norm": "grad_norm",
//                "optimizer": {...}, "batch_inputs": ["input_ids"]}
//
// Without it the artifact is an inference one. parseTrainingSpec checks the
// object against the manifest's signature before anything runs; a bad value
// is one line naming the manifest and the key.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_TRAININGSPEC_H
#define SHARDC_RUNTIME_CORE_TRAININGSPEC_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace shardc::rt {

/// The inputs a training step takes besides the model's own: a loss's
/// labels (causal-lm, cross-entropy) or target (mse). They are batch
/// inputs whether or not "batch_inputs" lists them.
constexpr const char *kLossInputs[] = {"labels", "target"};

struct TrainingSpec {
  /// The outputs that hold the loss and the gradients' norm (float32
  /// scalars), by name and position among the manifest's outputs.
  std::string loss, gradNorm;
  size_t lossOutput = 0, gradNormOutput = 0;
  /// The "optimizer" object as compact JSON ({"name": "adamw", ...}); the
  /// runtime only reports it, the step applies it.
  std::string optimizer;
  /// The inputs the data gives a new batch of every step ("batch_inputs",
  /// then labels or target where they are inputs not listed), each with a
  /// dim 0 that the steps' rows count along.
  std::vector<std::string> batchInputs;

  bool isBatchInput(const std::string &input) const;
};

/// The manifest's "training" object, checked against its `inputs` and
/// `outputs`; none when it has none. Errors name `manifestPath` and the key:
/// "manifest.json: training.loss: 'lost' is not an output of the artifact".
StatusOr<std::optional<TrainingSpec>> parseTrainingSpec(const nlohmann::json &manifest,
                                                        const std::vector<TensorSignature> &inputs,
                                                        const std::vector<TensorSignature> &outputs,
                                                        const std::string &manifestPath);

} // namespace shardc::rt

#endif
