//===- TensorDecoding.h - ONNX tensors and types to MLIR --------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_TENSORDECODING_H
#define SHARDC_COMPILER_IMPORT_TENSORDECODING_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

namespace shardc::import {

/// The MLIR element type of an ONNX TensorProto.DataType; null if unsupported.
mlir::Type elementTypeOf(int32_t onnxDataType, mlir::MLIRContext *context);

/// ONNX's name for a data type ("FLOAT16"), for messages.
std::string dataTypeName(int32_t onnxDataType);

/// Decodes a tensor whose bytes are inside the proto (raw_data or the typed
/// fields); errors at `location` name the tensor and what is wrong.
mlir::FailureOr<mlir::DenseElementsAttr> decodeTensor(const onnx::TensorProto &tensor,
                                                      mlir::Location location);

/// Elements in a tensor of these dims (after checking they are non-negative).
mlir::FailureOr<mlir::RankedTensorType> tensorTypeOf(const onnx::TensorProto &tensor,
                                                     mlir::Location location);

} // namespace shardc::import

#endif
