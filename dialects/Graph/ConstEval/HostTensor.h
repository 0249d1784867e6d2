//===- HostTensor.h - Constant tensors the graph folders evaluate -*- C++ -*-===//
//
// A HostTensor is a dense constant with a static shape, held in one of two
// wide storages so that every op needs only two code paths instead of ten:
// `floats` (doubles) for float types, `ints` (int64) for integer and Bool
// types. Values are always normalized to the element type (floats rounded to
// its precision, integers inside its range, Bool 0/1), so a HostTensor means
// exactly what the equivalent runtime tensor means and comparing two of them
// compares the runtime values.
//
// The ops live in the family headers, all included by ConstEval.h:
//   Elementwise.h  binary, unary, isNaN, isInf, cast, where
//   Movement.h     reshape, transpose, slice, concat, split, expand
//   Indexing.h     gather, gatherElements, gatherND, scatterElements,
//                  scatterND, trilu
//   Reduction.h    reduce, cumSum, softmax, topk
//   Generators.h   range
//   MatMul.h       matmul
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_HOSTTENSOR_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_HOSTTENSOR_H

#include "dialects/Graph/ConstEval/ScalarType.h"
#include "dialects/Graph/ConstEval/Shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::constfold {

struct HostTensor {
  ScalarType type = ScalarType::F32;
  Shape shape;
  /// Row-major elements when isFloat(type), else empty.
  std::vector<double> floats;
  /// Row-major elements for integer and Bool types, else empty.
  std::vector<int64_t> ints;

  /// Product of the dims; -1 if the shape is invalid (negative dim, overflow).
  int64_t numElements() const { return shapeNumElements(shape); }
  int64_t rank() const { return int64_t(shape.size()); }

  /// "" when the tensor is well-formed: valid shape of at most kMaxElements
  /// elements and the storage for its type holding exactly that many. Every op
  /// checks its operands with this and fails on a malformed one.
  std::string validate() const;

  /// "i32[2,2]{1, 2, 3, 4}", at most `maxShown` elements, for messages/tests.
  std::string toString(int64_t maxShown = 16) const;

  /// Element `index` as a double, whatever the storage (for messages/tests).
  double asDouble(int64_t index) const;

  // Factories. They normalize the values to `type`: fromInts/splatInt wrap
  // integers into the type's range, make Bool 0/1, and convert to float types
  // with one correct rounding; fromFloats/splatFloat round to the float type.
  // fromFloats/splatFloat require a float type: given another type they return
  // a malformed tensor (every op then rejects it) rather than guess a
  // float->int conversion; use cast() for that. A shape with a negative dim or
  // more than kMaxElements elements gives a malformed tensor without storage.
  static HostTensor fromInts(ScalarType type, Shape shape,
                             std::vector<int64_t> values);
  static HostTensor fromFloats(ScalarType type, Shape shape,
                               std::vector<double> values);
  static HostTensor splatInt(ScalarType type, Shape shape, int64_t value);
  static HostTensor splatFloat(ScalarType type, Shape shape, double value);
  static HostTensor scalarInt(ScalarType type, int64_t value) {
    return splatInt(type, {}, value);
  }
  static HostTensor scalarFloat(ScalarType type, double value) {
    return splatFloat(type, {}, value);
  }
};

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_HOSTTENSOR_H
