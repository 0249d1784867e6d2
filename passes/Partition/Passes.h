//===- Passes.h - partitioning into the per-device program ------*- C++ -*-===//
#ifndef SHARDC_PASSES_PARTITION_PASSES_H
#define SHARDC_PASSES_PARTITION_PASSES_H

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace shardc::partition {

#define GEN_PASS_DECL
#include "passes/Partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Partition/Passes.h.inc"

} // namespace shardc::partition

#endif
