//===- ImportOptions.h - what the user tells the importer -------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_IMPORTOPTIONS_H
#define SHARDC_COMPILER_IMPORT_IMPORTOPTIONS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardc::import {

struct ImportOptions {
  /// --dim NAME=VALUE: values of the model's symbolic (dim_param) dims.
  std::map<std::string, int64_t> dims;
  /// --input-shape INPUT=2x16: whole shapes of graph inputs, overriding the model's.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// --constant-input INPUT=VALUES|FILE.pb: inputs fixed at compile time (an
  /// ONNX TensorProto file, or comma-separated values in the input's shape).
  /// They leave the compiled signature; shapes computed from them fold.
  std::map<std::string, std::string> constantInputs;
  /// --train: every float initializer of more than one element is a weight
  /// (trainable), even the small ones inference folds as constants (a
  /// classifier's bias of 8 classes).
  bool training = false;
};

} // namespace shardc::import

#endif
