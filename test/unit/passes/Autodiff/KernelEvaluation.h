//===- KernelEvaluation.h - graph ops without a folder, in float64 -*- C++ -*-===//
//
// The raised ops (linear, layer/RMS norm, attention, rotary, top-k, routed
// experts) have no folder, so the constant evaluator cannot compute them. The
// CPU runtime's kernels can, in double for F64 operands: they are the kernels
// the E2E tests check against onnxruntime and torch, and they share no code
// with the gradient rules, so a rule is checked against the op's own
// semantics rather than against a second copy of its derivation.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_PASSES_AUTODIFF_KERNELEVALUATION_H
#define SHARDC_TEST_UNIT_PASSES_AUTODIFF_KERNELEVALUATION_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include "runtime/core/Tensor.h"

#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace shardc::autodiff::check {

using constfold::HostTensor;

/// Whether `op` is one of the ops evaluateWithKernel computes.
bool hasKernelEvaluation(mlir::Operation *op);

/// `op`'s results on `operands` (float operands F64) by the CPU kernel of the
/// op; "" on success, else what failed.
std::string evaluateWithKernel(mlir::Operation *op, const std::vector<HostTensor> &operands,
                               std::vector<HostTensor> &results);

/// graph.moe through moe_dispatch, moe_experts and moe_combine on one member
/// (MoeEvaluation.cpp); same contract as evaluateWithKernel.
std::string evaluateMoe(mlir::Operation *op, const std::vector<HostTensor> &operands,
                        std::vector<HostTensor> &results);

/// A runtime view of an F64 or I64 tensor's storage, without a copy; one
/// with no data for other types.
rt::TensorView viewOf(const HostTensor &tensor);

/// Storage of the result types of `op`, zero-filled, for a kernel to write.
std::vector<HostTensor> allocateResults(mlir::Operation *op);

} // namespace shardc::autodiff::check

#endif
