//===- ScatterElements.cpp - ONNX ScatterElements -------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/ScatterCombine.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

namespace shardc::constfold {

std::optional<ScatterReduction> parseScatterReduction(std::string_view name) {
  if (name == "none")
    return ScatterReduction::None;
  if (name == "add")
    return ScatterReduction::Add;
  if (name == "mul")
    return ScatterReduction::Mul;
  if (name == "max")
    return ScatterReduction::Max;
  if (name == "min")
    return ScatterReduction::Min;
  return std::nullopt;
}

namespace {

std::optional<Error> checkShapes(const HostTensor &data,
                                 const HostTensor &indices,
                                 const HostTensor &updates, int64_t axis) {
  if (!isInteger(indices.type))
    return fail(std::string("scatter indices must have an integer type but got ") +
                typeName(indices.type));
  if (auto error = detail::checkSameType(data, updates, "scatter_elements"))
    return error;
  if (indices.shape != updates.shape)
    return fail("scatter indices " + formatShape(indices.shape) +
                " and updates " + formatShape(updates.shape) +
                " must have the same shape");
  bool fits = indices.rank() == data.rank();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  if (!fits)
    return fail("scatter indices " + formatShape(indices.shape) +
                " do not fit data " + formatShape(data.shape) + " at axis " +
                std::to_string(axis));
  return std::nullopt;
}

} // namespace

Result<HostTensor> scatterElements(const HostTensor &data,
                                   const HostTensor &indices,
                                   const HostTensor &updates, int64_t axis,
                                   ScatterReduction reduction) {
  if (auto error = detail::checkOperand(data, "data"))
    return *error;
  if (auto error = detail::checkOperand(indices, "indices"))
    return *error;
  if (auto error = detail::checkOperand(updates, "updates"))
    return *error;
  if (auto error = detail::checkAxis(axis, data.rank()))
    return *error;
  if (auto error = checkShapes(data, indices, updates, axis))
    return *error;
  if (data.type == ScalarType::Bool && reduction != ScatterReduction::None)
    return fail("scatter_elements reductions need integer or float data, not bool");

  const int64_t dim = data.shape[size_t(axis)];
  for (int64_t index : indices.ints)
    if (index < -dim || index >= dim)
      return fail("scatter index " + std::to_string(index) +
                  " is out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(dim));

  // Walk the index positions; the data offset of a position is its offset in
  // data without the axis term (stride 0 there) plus index * axis stride.
  Shape dataStrides = rowMajorStrides(data.shape);
  const int64_t axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  HostTensor out = data;
  const ScalarType type = data.type;
  detail::withStorage(updates, out, [&](const auto &values, auto &result) {
    detail::forEachStrided<1>(
        indices.shape, {dataStrides}, {0},
        [&](int64_t i, const std::array<int64_t, 1> &at) {
          int64_t index = indices.ints[size_t(i)];
          if (index < 0)
            index += dim;
          auto &target = result[size_t(at[0] + index * axisStride)];
          target = detail::combine(reduction, type, target, values[size_t(i)]);
        });
  });
  return out;
}

} // namespace shardc::constfold
