//===- MatMul.h - numpy/ONNX MatMul -----------------------------*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_MATMUL_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_MATMUL_H

#include "dialects/Graph/ConstEval/HostTensor.h"

namespace shardc::constfold {

/// Most multiply-adds one matmul may cost (2^31, a few seconds at worst):
/// past this, folding would stall the compiler for an op the runtime does
/// anyway, so matmul fails instead.
inline constexpr int64_t kMaxMatMulWork = int64_t(1) << 31;

/// ONNX MatMul (numpy.matmul): both operands of one integer or float type and
/// rank >= 1. A 1-D lhs acts as a [1, K] row and a 1-D rhs as a [K, 1]
/// column, and that dim is dropped from the result; leading (batch) dims
/// broadcast. Floats accumulate in double in order of K and round once;
/// integers wrap to the type.
StatusOr<HostTensor> matmul(const HostTensor &lhs, const HostTensor &rhs);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_MATMUL_H
