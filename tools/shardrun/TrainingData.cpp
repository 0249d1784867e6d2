//===- TrainingData.cpp - shardrun --train's batches, step by step --------===//
#include "tools/shardrun/TrainingData.h"

#include "runtime/io/ErrorText.h"

#include <algorithm>
#include <cstring>

namespace shardc::shardrun {

using namespace rt;

namespace {

std::string describe(const HostTensor &tensor) {
  return std::string(dtypeName(tensor.dtype)) + " " + formatShape(tensor.shape);
}

/// A batch input's array: rows of the input's trailing dims and type, a
/// whole number of steps of them, enough for `steps`.
Status checkBatchInput(const TensorSignature &input, const HostTensor &array, int64_t steps) {
  const std::string name = "'" + io::printable(input.name) + "'";
  const int64_t rows = input.shape[0];
  const Shape trailing(input.shape.begin() + 1, input.shape.end());
  if (array.dtype != input.dtype || array.shape.empty() ||
      Shape(array.shape.begin() + 1, array.shape.end()) != trailing)
    return Status::error(name + " is " + describe(array) + "; expected " + dtypeName(input.dtype) +
                         " rows of " + formatShape(trailing) + " (the batch input is " +
                         dtypeName(input.dtype) + " " + formatShape(input.shape) + ")");
  if (array.shape[0] % rows != 0)
    return Status::error(name + " has " + std::to_string(array.shape[0]) +
                         " rows, not a multiple of " + std::to_string(rows) +
                         " (the rows of one step)");
  if (array.shape[0] / rows < steps)
    return Status::error(name + " has " + std::to_string(array.shape[0]) +
                         " rows: " + std::to_string(array.shape[0] / rows) + " step(s) of " +
                         std::to_string(rows) + ", fewer than the " + std::to_string(steps) +
                         " asked for");
  return {};
}

} // namespace

StatusOr<TrainingData> TrainingData::make(std::vector<io::NamedTensor> arrays,
                                          const ArtifactLayout &layout, int64_t steps,
                                          const std::string &path) {
  auto fail = [&](const Status &status) { return Status::error(path + ": " + status.message()); };
  TrainingData data;
  data.arrays_ = std::move(arrays);
  for (const io::NamedTensor &array : data.arrays_)
    if (std::none_of(layout.inputs.begin(), layout.inputs.end(),
                     [&](const TensorSignature &input) { return input.name == array.name; }))
      return fail(Status::error("holds '" + io::printable(array.name) +
                                "', which is not an input of the artifact"));
  for (const TensorSignature &input : layout.inputs) {
    const io::NamedTensor *array = io::findTensor(data.arrays_, input.name);
    if (!array)
      return fail(Status::error("lacks the input '" + io::printable(input.name) + "'"));
    Input fed;
    fed.array = &array->tensor;
    fed.batched = layout.training->isBatchInput(input.name);
    if (fed.batched) {
      if (Status status = checkBatchInput(input, array->tensor, steps); !status)
        return fail(status);
      fed.batch = HostTensor(input.dtype, input.shape);
      fed.stepBytes = fed.batch.bytes.size();
    } else if (array->tensor.dtype != input.dtype || array->tensor.shape != input.shape) {
      return fail(Status::error("'" + io::printable(input.name) + "' is " +
                                describe(array->tensor) + "; expected " + dtypeName(input.dtype) +
                                " " + formatShape(input.shape) +
                                " (not a batch input: every step gets it whole)"));
    }
    data.inputs_.push_back(std::move(fed));
  }
  return data;
}

const std::vector<const HostTensor *> &TrainingData::inputs(int64_t step) {
  ordered_.clear();
  for (Input &input : inputs_) {
    if (input.batched)
      std::memcpy(input.batch.bytes.data(),
                  input.array->bytes.data() + size_t(step - 1) * input.stepBytes, input.stepBytes);
    ordered_.push_back(input.batched ? &input.batch : input.array);
  }
  return ordered_;
}

} // namespace shardc::shardrun
