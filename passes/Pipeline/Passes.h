//===- Passes.h - pipeline stages, their schedule, micro-batches -*- C++ -*-===//
#ifndef SHARDC_PASSES_PIPELINE_PASSES_H
#define SHARDC_PASSES_PIPELINE_PASSES_H

#include "dialects/Dist/DistDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace shardc::pipeline {

#define GEN_PASS_DECL
#include "passes/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Pipeline/Passes.h.inc"

} // namespace shardc::pipeline

#endif
