//===- Passes.h - training: loss, gradients, optimizer update ---*- C++ -*-===//
#ifndef SHARDC_PASSES_AUTODIFF_PASSES_H
#define SHARDC_PASSES_AUTODIFF_PASSES_H

#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace shardc::autodiff {

#define GEN_PASS_DECL
#include "passes/Autodiff/Passes.h.inc"

/// registerAutodiffPasses(): shardc-autodiff, for the tools.
#define GEN_PASS_REGISTRATION
#include "passes/Autodiff/Passes.h.inc"

} // namespace shardc::autodiff

#endif
