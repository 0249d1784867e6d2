//===- ElementwiseExpression.h - an elementwise kernel as an expression -*- C++ -*-===//
//
// What FuseElementwise merges and FuseLinearEpilogue hangs behind a GEMM:
// a float32 elementwise kernel (one of the fusible ones, or an already
// "fused" one) seen as its inputs plus steps over them, in the encoding of
// the fused kernel (FuseElementwise.cpp's header): `ops` in evaluation
// order, `args` one per arity, an index below inputs.size() naming an
// input, above it the result of step index - inputs.size().
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_LOWERING_ELEMENTWISEEXPRESSION_H
#define SHARDC_PASSES_LOWERING_ELEMENTWISEEXPRESSION_H

#include "dialects/Exec/ExecDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace shardc::lowering {

inline constexpr llvm::StringLiteral kFusedKernel = "fused";

struct Expression {
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<std::string> ops;
  llvm::SmallVector<int64_t> args;
};

/// The arity of an op the fused kernel evaluates; 0 for any other name.
int arityOf(llvm::StringRef op);

/// The expression `kernel` computes, when it is a float32 elementwise kernel
/// the fused kernel can evaluate (all operands float32, one output).
std::optional<Expression> expressionOf(exec::KernelOp kernel);

} // namespace shardc::lowering

#endif // SHARDC_PASSES_LOWERING_ELEMENTWISEEXPRESSION_H
