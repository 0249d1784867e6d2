//===- OutlineStages.h - one function per pipeline stage ---------*- C++ -*-===//
//
// Replaces the program by one function per stage (`dist.stage` = k, named
// @stage<k>, in stage order). A stage computes its ops of the sequence; it
// copies the weights, constants and input-derived ops it uses; it takes the
// program's inputs it reads as arguments (in the program's order, their
// names kept); and a value an earlier stage made arrives by `dist.recv`,
// which that stage's `dist.send` of the same transfer feeds. The last stage
// returns the program's results (what earlier stages made is sent to it).
// Transfers are numbered in the order the receivers first use them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_OUTLINESTAGES_H
#define SHARDC_PASSES_PIPELINE_OUTLINESTAGES_H

#include "passes/Pipeline/StageProgram.h"

#include "mlir/IR/BuiltinOps.h"

namespace shardc::pipeline {

/// `stageOf[i]` is the stage of sequence op i (non-decreasing). Returns the
/// stage functions, in stage order.
llvm::SmallVector<mlir::func::FuncOp> outlineStages(mlir::func::FuncOp function,
                                                    const StageProgram &program,
                                                    llvm::ArrayRef<int64_t> stageOf,
                                                    int64_t stages);

/// Drops the arguments `function` does not read (a stage program takes only
/// the caller's inputs it reads).
void eraseUnusedArguments(mlir::func::FuncOp function);

} // namespace shardc::pipeline

#endif
