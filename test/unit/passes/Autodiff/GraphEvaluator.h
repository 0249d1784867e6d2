//===- GraphEvaluator.h - graph ops computed in float64 ---------*- C++ -*-===//
//
// Evaluates graph-dialect ops on host tensors: an op with a folder through
// that folder (the constant evaluator, ConstEval, which computes F64 in
// double), the raised ops without one through the CPU runtime's kernels
// (KernelEvaluation.h). The gradient check runs both an op and the ops its
// rule writes through here.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_PASSES_AUTODIFF_GRAPHEVALUATOR_H
#define SHARDC_TEST_UNIT_PASSES_AUTODIFF_GRAPHEVALUATOR_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace shardc::autodiff::check {

using constfold::HostTensor;

/// `op`'s results on `operands`; "" on success, else a line naming the op.
std::string evaluate(mlir::Operation *op, const std::vector<HostTensor> &operands,
                     std::vector<HostTensor> &results);

/// Evaluates `ops` in order, reading their operands from `values` and adding
/// their results to it; "" on success.
std::string evaluateAll(llvm::ArrayRef<mlir::Operation *> ops,
                        llvm::DenseMap<mlir::Value, HostTensor> &values);

} // namespace shardc::autodiff::check

#endif
