//===- TrainingData.h - shardrun --train's batches, step by step -*- C++ -*-===//
//
// `--data DATA.npz` holds every input a training step takes, by name. A
// batch input (TrainingSpec::batchInputs: the manifest's batch_inputs, and
// labels or target) is stacked on dim 0: step i (1-based) takes rows
// [(i-1)·B, i·B), B its dim 0 in the artifact's input signature. Any other
// input is given whole, and every step gets it. Every array is checked
// against the signature before the first step, with rows for every step
// asked for; every rank then gets each step's whole batch.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_TRAININGDATA_H
#define SHARDC_TOOLS_SHARDRUN_TRAININGDATA_H

#include "runtime/core/Artifact.h"
#include "runtime/io/NamedTensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::shardrun {

class TrainingData {
public:
  /// `arrays` (DATA's, as read from `path`) checked against `layout`'s
  /// inputs for `steps` steps. One line naming the file and the array.
  static rt::StatusOr<TrainingData> make(std::vector<rt::io::NamedTensor> arrays,
                                         const rt::ArtifactLayout &layout, int64_t steps,
                                         const std::string &path);

  /// Step `step`'s (1-based) inputs in the artifact's order; valid until the
  /// next call.
  const std::vector<const rt::HostTensor *> &inputs(int64_t step);

private:
  /// One input of the artifact: its array, and for a batch input the rows
  /// of a step and the tensor each step's rows are copied into.
  struct Input {
    const rt::HostTensor *array = nullptr;
    bool batched = false;
    size_t stepBytes = 0;
    rt::HostTensor batch;
  };

  TrainingData() = default;

  std::vector<rt::io::NamedTensor> arrays_;
  std::vector<Input> inputs_;
  std::vector<const rt::HostTensor *> ordered_;
};

} // namespace shardc::shardrun

#endif
