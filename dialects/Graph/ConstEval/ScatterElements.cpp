//===- ScatterElements.cpp - ONNX ScatterElements -------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/ScatterCombine.h"

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

Status checkShapes(const HostTensor &data, const HostTensor &indices, const HostTensor &updates,
                   int64_t axis) {
  if (Status status = detail::checkSameType(data, updates, "scatter_elements"); !status)
    return status;
  if (indices.shape != updates.shape)
    return Status::error("scatter indices " + formatShape(indices.shape) + " and updates " +
                         formatShape(updates.shape) + " must have the same shape");
  if (!detail::fitsOutsideAxis(indices, data, axis))
    return Status::error("scatter indices " + formatShape(indices.shape) + " do not fit data " +
                         formatShape(data.shape) + " at axis " + std::to_string(axis));
  return {};
}

} // namespace

StatusOr<HostTensor> scatterElements(const HostTensor &data, const HostTensor &indices,
                                     const HostTensor &updates, int64_t axis,
                                     ScatterReduction reduction) {
  if (Status status = detail::checkIndexOperands("scatter", data, indices, &updates, axis); !status)
    return status;
  if (Status status = checkShapes(data, indices, updates, axis); !status)
    return status;
  if (Status status = detail::checkReductionType(data, reduction, "scatter_elements"); !status)
    return status;
  if (Status status = detail::checkAxisIndices("scatter", indices, axis, data.shape[size_t(axis)]);
      !status)
    return status;

  // Positions are applied in row-major order (the last update wins with None).
  HostTensor out = data;
  const ScalarType type = data.type;
  detail::withStorage(updates, out, [&](const auto &values, auto &result) {
    detail::forEachAxisTarget(data.shape, indices, axis, [&](int64_t i, int64_t target) {
      auto &slot = result[size_t(target)];
      slot = detail::combine(reduction, type, slot, values[size_t(i)]);
    });
  });
  return out;
}

} // namespace shardc::constfold
