//===- Passes.h - lowering the graph dialect to exec programs ---*- C++ -*-===//
#ifndef SHARDC_PASSES_LOWERING_PASSES_H
#define SHARDC_PASSES_LOWERING_PASSES_H

#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace shardc::lowering {

#define GEN_PASS_DECL
#include "passes/Lowering/Passes.h.inc"

/// Lower to exec, fuse elementwise chains, plan memory (the `shardc-lower`
/// pipeline), on a program that shardc-verify-partitioned accepts. For the
/// CPU target (`cpuTarget`), matmuls read transposed operands in place
/// (shardc-fold-matmul-transposes) and the elementwise kernel after a
/// linear runs inside it (shardc-fuse-linear-epilogue): kernels only the
/// CPU backend has.
void buildLowerPipeline(mlir::OpPassManager &pm, bool cpuTarget = false);

/// Registers the passes and the `shardc-lower` pipeline.
void registerLoweringPasses();

} // namespace shardc::lowering

#endif
