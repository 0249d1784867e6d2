//===- OnnxModel.h - write trained initializers into an ONNX model -*- C++ -*-===//
//
// `shardrun --export-onnx` writes the source model of a training artifact
// with its trained weights. The runtime links no protobuf library: this
// reads the protobuf wire format of the model the compiler embedded
// (compiler/Artifact/ExportModel.h) just deep enough to find the graph's
// initializers (ModelProto field 7 = graph, GraphProto field 5 =
// initializer; TensorProto 1 dims, 2 data_type, 8 name, 9 raw_data) and
// copies every other field byte for byte. A trained initializer's data
// fields are dropped and its value written as raw_data (little-endian, as
// ONNX stores it). The embedded file is read as hostile: every tag, varint
// and length is checked against the bytes left.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_IO_ONNXMODEL_H
#define SHARDC_RUNTIME_IO_ONNXMODEL_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"
#include "runtime/io/AtomicFile.h"

#include <map>
#include <string>
#include <string_view>

namespace shardc::rt::io {

/// The metadata_props key that marks a model as shardrun's export (the
/// compiler adds it to the model it embeds): an existing file is replaced
/// by an export only when it has it.
constexpr const char *kExportMarkerKey = "shardc.export";

/// ONNX's TensorProto.DataType of `dtype` (1 for float32, ...).
int onnxDataType(DType dtype);

/// The value an initializer gets, in its type and dims: the model's
/// initializer of that name must declare the same.
struct InitializerValue {
  DType dtype = DType::F32;
  Shape shape;
  const std::byte *data = nullptr; ///< row-major, numElements(shape) elements
};

/// Writes the ModelProto `model` to `out` with each initializer named in
/// `values` holding its value. Fails, naming `what` (the embedded file),
/// on a malformed message, an initializer not found or found twice, one
/// whose type or dims differ from its value's, and an output over
/// protobuf's 2 GiB.
Status writeModelWithInitializers(std::string_view model,
                                  const std::map<std::string, InitializerValue> &values,
                                  const std::string &what, AtomicFile &out);

/// Whether `model` parses as a ModelProto whose metadata_props has `key`.
bool hasMetadataKey(std::string_view model, std::string_view key);

} // namespace shardc::rt::io

#endif
