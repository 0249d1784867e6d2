//===- ModelLoader.h - read an ONNX model file into a ModelProto -*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_MODELLOADER_H
#define SHARDC_COMPILER_IMPORT_MODELLOADER_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace shardc::import {

/// Where an initializer's raw_data bytes sit inside the binary model file.
struct ByteRange {
  int64_t offset = 0;
  int64_t size = 0;
};

struct LoadedModel {
  onnx::ModelProto proto;
  std::string path;
  /// Initializer name -> position of its raw_data in `path` (binary models only),
  /// so weights can be referenced by file and offset instead of copied.
  llvm::StringMap<ByteRange> embeddedWeights;
};

/// Parses `bytes` (the contents of `path`) as binary protobuf, or as ONNX text
/// format when the path ends in .onnxtext. Errors say what is wrong with the file.
llvm::Expected<LoadedModel> parseModel(llvm::StringRef bytes, llvm::StringRef path);

/// Reads and parses the model at `path`.
llvm::Expected<LoadedModel> loadModel(llvm::StringRef path);

} // namespace shardc::import

#endif
