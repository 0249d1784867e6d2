//===- TensorDecoding.cpp - ONNX tensors and types to MLIR ----------------===//
#include "compiler/Import/TensorDecoding.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;

namespace shardc::import {

Type elementTypeOf(int32_t dataType, MLIRContext *context) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::BOOL: return b.getI1Type();
  case onnx::TensorProto::INT8: return b.getIntegerType(8);
  case onnx::TensorProto::UINT8: return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::INT16: return b.getIntegerType(16);
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  default: return {};
  }
}

std::string dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

FailureOr<RankedTensorType> tensorTypeOf(const onnx::TensorProto &tensor, Location location) {
  Type element = elementTypeOf(tensor.data_type(), location.getContext());
  if (!element)
    return emitError(location) << "tensor '" << tensor.name() << "' has unsupported element type "
                               << dataTypeName(tensor.data_type());
  SmallVector<int64_t> shape;
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) {
    // Reject negative dims and element counts that would overflow int64.
    if (dim < 0 || (dim > 0 && elements > (int64_t(1) << 40) / dim))
      return emitError(location) << "tensor '" << tensor.name() << "' has invalid dims "
                                 << graph::formatShape(SmallVector<int64_t>(tensor.dims().begin(),
                                                                            tensor.dims().end()));
    elements *= dim;
    shape.push_back(dim);
  }
  return RankedTensorType::get(shape, element);
}

namespace {

template <typename T, typename Field>
DenseElementsAttr fromField(RankedTensorType type, const Field &values) {
  SmallVector<T> converted(values.begin(), values.end());
  return DenseElementsAttr::get(type, ArrayRef<T>(converted));
}

/// FLOAT16/BFLOAT16 values travel as their 16-bit patterns in int32_data.
DenseElementsAttr fromHalfBits(RankedTensorType type,
                               const google::protobuf::RepeatedField<int32_t> &bits) {
  const llvm::fltSemantics &semantics = cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  for (int32_t pattern : bits)
    values.emplace_back(semantics, APInt(16, static_cast<uint16_t>(pattern)));
  return DenseElementsAttr::get(type, values);
}

} // namespace

FailureOr<DenseElementsAttr> decodeTensor(const onnx::TensorProto &tensor, Location location) {
  auto type = tensorTypeOf(tensor, location);
  if (failed(type))
    return failure();
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return emitError(location) << "tensor '" << tensor.name()
                               << "' keeps its data in an external file; expected inline data";
  int64_t count = type->getNumElements();
  Type element = type->getElementType();
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    int64_t expected = count * graph::elementByteWidth(element);
    if (static_cast<int64_t>(raw.size()) != expected)
      return emitError(location) << "tensor '" << tensor.name() << "' holds " << raw.size()
                                 << " bytes of data; expected " << expected << " for "
                                 << graph::formatShape(type->getShape()) << " " << element;
    if (element.isInteger(1)) {
      // MLIR packs booleans as bits; ONNX stores one byte each.
      SmallVector<bool> values;
      for (char byte : raw)
        values.push_back(byte != 0);
      return DenseElementsAttr::get(*type, ArrayRef<bool>(values));
    }
    return DenseElementsAttr::getFromRawBuffer(*type, ArrayRef<char>(raw.data(), raw.size()));
  }

  auto checkCount = [&](int64_t got) -> LogicalResult {
    if (got == count)
      return success();
    return emitError(location) << "tensor '" << tensor.name() << "' holds " << got
                               << " values; expected " << count << " for "
                               << graph::formatShape(type->getShape());
  };
  // Typed fields: check the count, then convert (`T{}` selects the C++ type).
  auto typed = [&](const auto &field, auto tag) -> FailureOr<DenseElementsAttr> {
    if (failed(checkCount(field.size())))
      return failure();
    return fromField<decltype(tag)>(*type, field);
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT: return typed(tensor.float_data(), float{});
  case onnx::TensorProto::DOUBLE: return typed(tensor.double_data(), double{});
  case onnx::TensorProto::INT64: return typed(tensor.int64_data(), int64_t{});
  case onnx::TensorProto::INT32: return typed(tensor.int32_data(), int32_t{});
  case onnx::TensorProto::INT16: return typed(tensor.int32_data(), int16_t{});
  case onnx::TensorProto::INT8: return typed(tensor.int32_data(), int8_t{});
  case onnx::TensorProto::UINT8: return typed(tensor.int32_data(), uint8_t{});
  case onnx::TensorProto::BOOL: return typed(tensor.int32_data(), bool{});
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    if (failed(checkCount(tensor.int32_data_size())))
      return failure();
    return fromHalfBits(*type, tensor.int32_data());
  default:
    break;
  }
  return emitError(location) << "tensor '" << tensor.name() << "' has unsupported element type "
                             << dataTypeName(tensor.data_type());
}

} // namespace shardc::import
