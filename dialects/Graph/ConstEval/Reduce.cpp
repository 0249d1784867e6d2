//===- Reduce.cpp - ONNX Reduce* ------------------------------------------===//

#include "dialects/Graph/ConstEval/Reduction.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardc::constfold {
namespace {

/// Which dims are reduced, or why `axes` is not a valid set of dims.
StatusOr<std::vector<bool>> reducedDims(const std::vector<int64_t> &axes, const Shape &shape) {
  const int64_t rank = int64_t(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t axis : axes) {
    if (Status status = detail::checkAxis(axis, rank); !status)
      return status;
    if (reduced[size_t(axis)])
      return Status::error("reduction axes " + formatShape(axes) + " repeat axis " +
                           std::to_string(axis));
    reduced[size_t(axis)] = true;
  }
  return reduced;
}

/// Folds every element into its output slot: acc[out] = fn(acc[out], x). The
/// input is walked in row-major order with the reduced dims' output strides
/// set to 0, so all elements of one group land on the same slot, in order.
template <typename Acc, typename In, typename Fn>
void accumulate(const HostTensor &operand, const std::vector<In> &input,
                const Shape &outStrides, std::vector<Acc> &acc, Fn fn) {
  detail::forEachStrided<1>(operand.shape, {outStrides}, {0},
                            [&](int64_t i, const std::array<int64_t, 1> &at) {
                              Acc &slot = acc[size_t(at[0])];
                              slot = fn(slot, input[size_t(i)]);
                            });
}

void reduceFloats(ReduceOp op, const HostTensor &operand,
                  const Shape &outStrides, int64_t groupSize, HostTensor &out) {
  std::vector<double> &acc = out.floats;
  auto run = [&](double init, auto fn) {
    std::fill(acc.begin(), acc.end(), init);
    accumulate(operand, operand.floats, outStrides, acc, fn);
  };
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean:
    run(0.0, [](double a, double x) { return a + x; });
    break;
  case ReduceOp::SumSquare:
    run(0.0, [](double a, double x) { return a + x * x; });
    break;
  case ReduceOp::Prod:
    run(1.0, [](double a, double x) { return a * x; });
    break;
  // Once the accumulator is NaN it stays NaN, so NaN propagates.
  case ReduceOp::Max:
    run(-inf, [](double a, double x) { return std::isnan(a) || a >= x ? a : x; });
    break;
  case ReduceOp::Min:
    run(inf, [](double a, double x) { return std::isnan(a) || a <= x ? a : x; });
    break;
  }
  if (op == ReduceOp::Mean)
    for (double &v : acc)
      v /= double(groupSize); // 0 / 0 = NaN for an empty group, as in numpy
  detail::roundAll(acc, out.type);
}

StatusOr<HostTensor> reduceInts(ReduceOp op, const HostTensor &operand, const Shape &outStrides,
                                int64_t groupSize, HostTensor &out) {
  const ScalarType type = out.type;
  std::vector<int64_t> &acc = out.ints;
  auto run = [&](int64_t init, auto fn) {
    std::fill(acc.begin(), acc.end(), init);
    accumulate(operand, operand.ints, outStrides, acc, fn);
  };
  // Wrapping at 64 bits and then at the type's width equals wrapping at the
  // type's width throughout.
  auto wrap64 = [](uint64_t bits) { return wrapInt(ScalarType::I64, bits); };
  bool overflow = false;
  switch (op) {
  case ReduceOp::Sum:
    run(0, [&](int64_t a, int64_t x) { return wrap64(uint64_t(a) + uint64_t(x)); });
    break;
  case ReduceOp::SumSquare:
    run(0, [&](int64_t a, int64_t x) {
      return wrap64(uint64_t(a) + uint64_t(x) * uint64_t(x));
    });
    break;
  case ReduceOp::Prod:
    run(1, [&](int64_t a, int64_t x) { return wrap64(uint64_t(a) * uint64_t(x)); });
    break;
  case ReduceOp::Max:
    run(minValue(type), [](int64_t a, int64_t x) { return std::max(a, x); });
    break;
  case ReduceOp::Min:
    run(maxValue(type), [](int64_t a, int64_t x) { return std::min(a, x); });
    break;
  case ReduceOp::Mean:
    if (groupSize == 0)
      return Status::error("integer mean over an empty reduction");
    run(0, [&](int64_t a, int64_t x) {
      int64_t sum = 0;
      overflow |= __builtin_add_overflow(a, x, &sum);
      return sum;
    });
    for (int64_t &v : acc) {
      overflow |= !fitsIn(type, v);
      v /= groupSize; // truncates toward zero
    }
    if (overflow)
      return Status::error(std::string("integer mean: the sum does not fit ") + typeName(type));
    return std::move(out);
  }
  detail::wrapAll(acc, type);
  return std::move(out);
}

} // namespace

StatusOr<HostTensor> reduce(ReduceOp op, const HostTensor &operand,
                            const std::vector<int64_t> &axes, bool keepdims) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (operand.type == ScalarType::Bool)
    return Status::error("reduce needs an integer or float operand but got bool");
  StatusOr<std::vector<bool>> reduced = reducedDims(axes, operand.shape);
  if (!reduced)
    return Status::error(reduced.message());

  Shape keptShape = operand.shape, shape;
  int64_t groupSize = 1; // bounded by the operand's (valid) shape extent
  for (size_t d = 0; d < operand.shape.size(); ++d) {
    if ((*reduced)[d]) {
      groupSize *= operand.shape[d];
      keptShape[d] = 1;
      if (keepdims)
        shape.push_back(1);
    } else {
      shape.push_back(operand.shape[d]);
    }
  }
  Shape outStrides = rowMajorStrides(keptShape);
  for (size_t d = 0; d < outStrides.size(); ++d)
    if ((*reduced)[d])
      outStrides[d] = 0;

  StatusOr<HostTensor> out = detail::allocate(operand.type, shape);
  if (!out)
    return out;
  if (isFloat(operand.type)) {
    reduceFloats(op, operand, outStrides, groupSize, *out);
    return out;
  }
  return reduceInts(op, operand, outStrides, groupSize, *out);
}

} // namespace shardc::constfold
