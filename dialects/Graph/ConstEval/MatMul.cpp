//===- MatMul.cpp - numpy/ONNX MatMul -------------------------------------===//

#include "dialects/Graph/ConstEval/MatMul.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

#include <algorithm>

namespace shardc::constfold {
namespace {

struct MatrixDims {
  int64_t m, k, n;
};

/// out[m, n] = sum_p a[m, p] * b[p, n] for one matrix pair at the given
/// element offsets. The i-p-j loop order reads both operands row by row;
/// `row` holds the wide accumulators of one output row.
template <typename T, typename Acc, typename Finish>
void multiply(const T *a, const T *b, T *out, MatrixDims dims,
              std::vector<Acc> &row, Finish finish) {
  for (int64_t i = 0; i < dims.m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < dims.k; ++p) {
      const Acc scale = Acc(a[i * dims.k + p]);
      const T *bRow = b + p * dims.n;
      for (int64_t j = 0; j < dims.n; ++j)
        row[size_t(j)] += scale * Acc(bRow[j]);
    }
    for (int64_t j = 0; j < dims.n; ++j)
      out[i * dims.n + j] = finish(row[size_t(j)]);
  }
}

} // namespace

StatusOr<HostTensor> matmul(const HostTensor &lhs, const HostTensor &rhs) {
  if (Status status = detail::checkOperand(lhs, "lhs"); !status)
    return status;
  if (Status status = detail::checkOperand(rhs, "rhs"); !status)
    return status;
  if (Status status = detail::checkSameType(lhs, rhs, "matmul"); !status)
    return status;
  if (lhs.type == ScalarType::Bool)
    return Status::error("matmul needs integer or float operands but got bool");
  if (lhs.rank() < 1 || rhs.rank() < 1)
    return Status::error("matmul needs operands of rank >= 1 but got " + formatShape(lhs.shape) +
                         " and " + formatShape(rhs.shape));

  // Promote 1-D operands to matrices (numpy's rule), remembering to drop the
  // added dim from the result.
  Shape a = lhs.shape, b = rhs.shape;
  const bool vectorLhs = a.size() == 1, vectorRhs = b.size() == 1;
  if (vectorLhs)
    a.insert(a.begin(), 1);
  if (vectorRhs)
    b.push_back(1);
  const MatrixDims dims{a[a.size() - 2], a.back(), b.back()};
  if (b[b.size() - 2] != dims.k)
    return Status::error("matmul contracting dims differ: " + formatShape(lhs.shape) + " and " +
                         formatShape(rhs.shape));

  const Shape aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
  StatusOr<Shape> batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return Status::error("matmul batch dims: " + batch.message());
  Shape shape = *batch;
  if (!vectorLhs)
    shape.push_back(dims.m);
  if (!vectorRhs)
    shape.push_back(dims.n);
  StatusOr<HostTensor> out = detail::allocate(lhs.type, shape);
  if (!out)
    return out;

  // An empty result needs no work, and returning here also means that every
  // dim below is >= 1, so K <= lhs's element count <= kMaxElements and the
  // work estimate and stride products cannot overflow.
  if (out->numElements() == 0)
    return out;
  const int64_t work = out->numElements() * dims.k;
  if (work > kMaxMatMulWork)
    return Status::error("matmul needs " + std::to_string(work) +
                         " multiply-adds, more than the folding limit of " +
                         std::to_string(kMaxMatMulWork));

  // Walk the broadcast batch with per-operand matrix strides (0 where an
  // operand's batch dim broadcasts).
  std::array<Shape, 2> strides = {broadcastStrides(aBatch, *batch),
                                  broadcastStrides(bBatch, *batch)};
  for (int64_t &s : strides[0])
    s *= dims.m * dims.k;
  for (int64_t &s : strides[1])
    s *= dims.k * dims.n;
  const int64_t outMatrix = dims.m * dims.n;
  const ScalarType type = lhs.type;

  if (isFloat(type)) {
    std::vector<double> row(size_t(dims.n));
    detail::forEachStrided<2>(
        *batch, strides, {0, 0}, [&](int64_t i, const std::array<int64_t, 2> &at) {
          multiply(lhs.floats.data() + at[0], rhs.floats.data() + at[1],
                   out->floats.data() + i * outMatrix, dims, row,
                   [type](double v) { return roundFloat(type, v); });
        });
  } else {
    // uint64 accumulation wraps with defined behaviour; the sum modulo 2^64
    // reduced to the type's width is the wrapped integer result.
    std::vector<uint64_t> row(size_t(dims.n));
    detail::forEachStrided<2>(
        *batch, strides, {0, 0}, [&](int64_t i, const std::array<int64_t, 2> &at) {
          multiply(lhs.ints.data() + at[0], rhs.ints.data() + at[1],
                   out->ints.data() + i * outMatrix, dims, row,
                   [type](uint64_t v) { return wrapInt(type, v); });
        });
  }
  return out;
}

} // namespace shardc::constfold
