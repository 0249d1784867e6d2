//===- ConstantConversion.cpp - MLIR attributes <-> host tensors ----------===//
#include "dialects/Graph/ConstantConversion.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using shardc::constfold::HostTensor;
using shardc::constfold::ScalarType;

namespace shardc::graph {

std::optional<ScalarType> toScalarType(Type type) {
  if (type.isF16())
    return ScalarType::F16;
  if (type.isBF16())
    return ScalarType::BF16;
  if (type.isF32())
    return ScalarType::F32;
  if (type.isF64())
    return ScalarType::F64;
  if (type.isInteger(1))
    return ScalarType::Bool;
  if (type.isUnsignedInteger(8))
    return ScalarType::U8;
  if (type.isSignlessInteger(8))
    return ScalarType::I8;
  if (type.isSignlessInteger(16))
    return ScalarType::I16;
  if (type.isSignlessInteger(32))
    return ScalarType::I32;
  if (type.isSignlessInteger(64))
    return ScalarType::I64;
  return std::nullopt;
}

Type toElementType(ScalarType type, MLIRContext *context) {
  Builder b(context);
  switch (type) {
  case ScalarType::Bool: return b.getI1Type();
  case ScalarType::I8: return b.getIntegerType(8);
  case ScalarType::I16: return b.getIntegerType(16);
  case ScalarType::I32: return b.getI32Type();
  case ScalarType::I64: return b.getI64Type();
  case ScalarType::U8: return b.getIntegerType(8, /*isSigned=*/false);
  case ScalarType::F16: return b.getF16Type();
  case ScalarType::BF16: return b.getBF16Type();
  case ScalarType::F32: return b.getF32Type();
  case ScalarType::F64: return b.getF64Type();
  }
  return {};
}

std::optional<HostTensor> toHostTensor(Attribute attribute) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attribute);
  if (!dense)
    return std::nullopt;
  auto type = cast<RankedTensorType>(dense.getType());
  auto scalar = toScalarType(type.getElementType());
  if (!scalar || type.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (constfold::isFloat(*scalar)) {
    std::vector<double> values;
    values.reserve(type.getNumElements());
    if (type.getElementType().isF32())
      for (float v : dense.getValues<float>())
        values.push_back(v);
    else if (type.getElementType().isF64())
      for (double v : dense.getValues<double>())
        values.push_back(v);
    else
      for (const APFloat &v : dense.getValues<APFloat>())
        values.push_back(v.convertToDouble() /* f16/bf16 widen exactly */);
    return HostTensor::fromFloats(*scalar, shape, std::move(values));
  }
  std::vector<int64_t> values;
  values.reserve(type.getNumElements());
  bool unsignedValues = *scalar == ScalarType::Bool || *scalar == ScalarType::U8;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(unsignedValues ? static_cast<int64_t>(v.getZExtValue()) : v.getSExtValue());
  return HostTensor::fromInts(*scalar, shape, std::move(values));
}

namespace {
template <typename T, typename Source>
DenseElementsAttr denseOf(RankedTensorType type, const std::vector<Source> &values) {
  std::vector<T> narrowed(values.begin(), values.end());
  return DenseElementsAttr::get(type, llvm::ArrayRef<T>(narrowed));
}
} // namespace

DenseElementsAttr toElementsAttr(const HostTensor &tensor, MLIRContext *context) {
  Type element = toElementType(tensor.type, context);
  auto type = RankedTensorType::get(tensor.shape, element);
  switch (tensor.type) {
  case ScalarType::F32: return denseOf<float>(type, tensor.floats);
  case ScalarType::F64: return denseOf<double>(type, tensor.floats);
  case ScalarType::F16:
  case ScalarType::BF16: {
    const llvm::fltSemantics &semantics = cast<FloatType>(element).getFloatSemantics();
    SmallVector<APFloat> values;
    values.reserve(tensor.floats.size());
    for (double v : tensor.floats) {
      APFloat value(v);
      bool lost;
      value.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      values.push_back(value);
    }
    return DenseElementsAttr::get(type, values);
  }
  case ScalarType::Bool: {
    SmallVector<bool> values;
    for (int64_t v : tensor.ints)
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  case ScalarType::I8: return denseOf<int8_t>(type, tensor.ints);
  case ScalarType::U8: return denseOf<uint8_t>(type, tensor.ints);
  case ScalarType::I16: return denseOf<int16_t>(type, tensor.ints);
  case ScalarType::I32: return denseOf<int32_t>(type, tensor.ints);
  case ScalarType::I64: return denseOf<int64_t>(type, tensor.ints);
  }
  return {};
}

} // namespace shardc::graph
